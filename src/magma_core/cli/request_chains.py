"""``magma scenarios test-requests DEFINITION``: what a definition generates, without a simulator.

``--mode trace`` prints the chain of requests of each seed (its stages and target calls);
``--mode mass`` generates many seeds and prints the coverage of request types and the
distribution of stage counts.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from magma_core.cli import CliError
from magma_core.cli.ctor_args import accept_ctor_args
from magma_core.json_types import JSONDict

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.data_structures.task_state import TaskState
    from magma_core.simulation.stage import BaseTaskStage
    from magma_core.simulation.tasks import GeneratedTask, TaskDefinition
    from magma_core.simulation.tasks.requests import BaseRequest


def register(actions: argparse._SubParsersAction) -> None:
    parser = actions.add_parser(
        "test-requests", help="print the request chains or coverage a definition generates"
    )
    accept_ctor_args(parser)
    parser.add_argument("definition", help="scenario.Definition, e.g. sorting.LongSorting")
    parser.add_argument("mode_word", nargs="?", choices=("trace", "mass"), default=None,
                        metavar="trace|mass", help="the same as --mode")
    parser.add_argument("--seeds", "--count", dest="seeds", type=_positive, default=None,
                        help="seeds to generate (trace: 3, mass: 200)")
    parser.add_argument("--seed", type=_non_negative, default=0, help="first seed (0)")
    parser.add_argument("--mode", choices=("trace", "mass"), default="trace")
    parser.add_argument("--max-target-tool-calls", type=_positive, default=None,
                        help="the generator's budget (the definition's, 40 by default)")
    parser.add_argument("--max-stages", type=_positive, default=None,
                        help="stage cap per task (the definition's); a request never splits")
    parser.add_argument("--setup", nargs="+", metavar="REQUEST", default=None,
                        help="requests applied once before every chain (an index, a class "
                        "name or an unambiguous part of one of active_requests); their stages "
                        "are discarded")
    parser.set_defaults(func=run)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def _non_negative(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return int(text)


def _definition(component: str, arguments: JSONDict) -> Any:
    from magma_core.scenarios import ScenarioError, load_definition
    from magma_core.scenarios.construct import construct

    try:
        return construct(load_definition(component), arguments, component)
    except ScenarioError as exc:
        raise CliError(str(exc)) from None


def setup_requests(definition: TaskDefinition, words: list[str]) -> list[BaseRequest]:
    """The requests ``--setup`` names: an index into ``active_requests``, a class name or
    request type, or an unambiguous part of one."""
    requests = list(definition.active_requests)
    names = [type(r).__name__ for r in requests]
    chosen = []
    for word in words:
        if word.isdigit() and int(word) < len(requests):
            chosen.append(requests[int(word)])
            continue
        exact = [r for r, n in zip(requests, names, strict=True)
                 if word in (n, r.get_request_type())]
        partial = [r for r, n in zip(requests, names, strict=True) if word.lower() in n.lower()]
        found = exact or partial
        if len({id(r) for r in found}) != 1:
            problem = "matches several of" if found else "names none of"
            raise CliError(f"--setup {word!r} {problem} the active requests: "
                           f"{', '.join(f'{k}: {n}' for k, n in enumerate(names))}")
        chosen.append(found[0])
    return chosen


class _Chain:
    """What ``test-requests`` generates: the definition, the budget, the stage cap and the
    setup's state (None: the definition's starting state)."""

    def __init__(self, definition: TaskDefinition, budget: int | None, max_stages: int | None,
                 start: TaskState | None = None) -> None:
        self.definition, self.budget, self.max_stages, self.start = definition, budget, max_stages, start

    def generate(self, seed: int, observer: Callable[[JSONDict], None] | None = None) -> GeneratedTask:
        try:
            return self.definition.generate(seed, max_target_tool_calls=self.budget,
                                            max_stages=self.max_stages, start_state=self.start,
                                            observer=observer)
        except (TypeError, ValueError) as exc:
            raise CliError(f"seed {seed}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    import copy

    from magma_core.simulation.tasks.generator import setup_state

    definition = _definition(args.definition, getattr(args, "ctor_args", {}))
    start = None
    if args.setup:
        requests = copy.deepcopy(setup_requests(definition, args.setup))
        try:
            start = setup_state(definition, requests)
        except (TypeError, ValueError, KeyError) as exc:
            raise CliError(f"--setup: {exc}") from None
    chain = _Chain(definition, args.max_target_tool_calls, args.max_stages, start)
    console = Console(soft_wrap=True, highlight=False)
    mode = args.mode_word or args.mode
    if mode == "trace":
        if args.setup:
            console.print(f"setup: {', '.join(args.setup)} applied before every chain")
        _trace(console, chain, args.seed, args.seeds or 3)
    else:
        _mass(console, chain, args.seed, args.seeds or 200)
    return 0


def _trace(console: Console, chain: _Chain, first: int, seeds: int) -> None:
    for seed in range(first, first + seeds):
        draws: list[JSONDict] = []
        task = chain.generate(seed, draws.append)
        calls = sum(s.target_tool_calls for s in task.stages)
        console.print(f"[bold]seed {seed}[/bold]: {len(task.stages)} stages, "
                      f"{calls} target tool calls, {len(task.requests)} requests")
        kept = [d for d in draws if d["kept"]]
        for record, draw in zip(task.requests, kept, strict=False):
            stages = task.stages[record.first_stage:record.first_stage + record.num_stages]
            last = record.first_stage + record.num_stages - 1
            cost = sum(s.target_tool_calls for s in stages)
            weights = ", ".join(f"{name} {weight:g}" for name, weight in draw["weights"])
            console.print(f"  weights: {weights}")
            console.print(f"  stages {record.first_stage:>2}-{last:<2} {record.description}  "
                          f"({_count(record.num_stages, 'stage')}, {_count(cost, 'call')})")
            for index, stage in enumerate(stages, start=record.first_stage):
                _print_stage(console, index, stage)
        for draw in draws:
            if not draw["kept"]:
                console.print(f"  stopped: {draw['request'].get_request_type()} would exceed the "
                              "budget or the stage cap (a request is never split)")
        for rule in task.rules:
            console.print(f"  rule: {rule}")


def _print_stage(console: Console, index: int, stage: BaseTaskStage) -> None:
    """One stage: its instruction, goals and settings."""
    instruction = stage.stage_input.instruction
    text = instruction.get_content() if hasattr(instruction, "get_content") else None
    said = f"(user) {text}" if text else "(continues)"
    params = stage.global_parameters
    settings = [f"target {stage.target_tool_calls}", f"max {stage.max_tool_calls}"]
    if stage.is_text_only():
        settings.append(f"text-only {params.text_only_validation.value}")
    for flag in ("reset_at_end", "additive_stage", "allow_tools_before_answer"):
        if getattr(params, flag):
            settings.append(flag)
    goals = ", ".join(type(g).__name__ for g in stage.goals) or "none"
    console.print(f"    {index:>2} {type(stage).__name__}: {said}")
    console.print(f"       goals: {goals}; {stage.stage_goal_description}  ({', '.join(settings)})")


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _mass(console: Console, chain: _Chain, first: int, seeds: int) -> None:
    definition = chain.definition
    started = time.perf_counter()
    lengths: list[int] = []
    per_type: dict[str, list[int]] = collections.defaultdict(list)
    tasks_with: collections.Counter[str] = collections.Counter()
    text_only = 0
    for seed in range(first, first + seeds):
        task = chain.generate(seed)
        lengths.append(len(task.stages))
        text_only += sum(1 for s in task.stages if s.is_text_only())
        for record in task.requests:
            per_type[record.request_type].append(record.num_stages)
        tasks_with.update({r.request_type for r in task.requests})
    elapsed = time.perf_counter() - started
    table = Table("request type", "requests", "tasks with it", "stages (mean)",
                  title=f"{definition.name}: {seeds} seeds from {first}")
    for kind in sorted(per_type):
        table.add_row(kind, str(len(per_type[kind])), f"{100 * tasks_with[kind] / seeds:.0f}%",
                      f"{statistics.mean(per_type[kind]):.1f}")
    console.print(table)
    histogram = collections.Counter(lengths)
    console.print(f"stages per task: min {min(lengths)}, mean {statistics.mean(lengths):.1f}, "
                  f"max {max(lengths)}; text-only stages {text_only}")
    console.print("  " + ", ".join(f"{n}: {histogram[n]}" for n in sorted(histogram)))
    console.print(f"generated in {elapsed:.2f} s ({1000 * elapsed / seeds:.1f} ms per task)")
