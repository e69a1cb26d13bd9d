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
from typing import Any

from rich.console import Console
from rich.table import Table

from magma_core.cli import CliError


def register(actions: argparse._SubParsersAction) -> None:
    parser = actions.add_parser(
        "test-requests", help="print the request chains or coverage a definition generates"
    )
    parser.add_argument("definition", help="scenario.Definition, e.g. sorting.LongSorting")
    parser.add_argument("--seeds", type=_positive, default=None,
                        help="seeds to generate (trace: 3, mass: 200)")
    parser.add_argument("--seed", type=_non_negative, default=0, help="first seed (0)")
    parser.add_argument("--mode", choices=("trace", "mass"), default="trace")
    parser.add_argument("--max-target-tool-calls", type=_positive, default=None,
                        help="the generator's budget (the definition's, 40 by default)")
    parser.set_defaults(func=run)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def _non_negative(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return int(text)


def _definition(component: str) -> Any:
    from magma_core.scenarios import ScenarioError, load_definition

    try:
        return load_definition(component)()
    except ScenarioError as exc:
        raise CliError(str(exc)) from None
    except (TypeError, ValueError) as exc:
        raise CliError(f"definition {component} is not valid: {exc}") from None


def _generate(definition: Any, seed: int, budget: int | None) -> Any:
    try:
        return definition.generate(seed, max_target_tool_calls=budget)
    except (TypeError, ValueError) as exc:
        raise CliError(f"seed {seed}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    definition = _definition(args.definition)
    console = Console(soft_wrap=True, highlight=False)
    if args.mode == "trace":
        _trace(console, definition, args.seed, args.seeds or 3, args.max_target_tool_calls)
    else:
        _mass(console, definition, args.seed, args.seeds or 200, args.max_target_tool_calls)
    return 0


def _trace(console: Console, definition: Any, first: int, seeds: int, budget: int | None) -> None:
    for seed in range(first, first + seeds):
        task = _generate(definition, seed, budget)
        calls = sum(s.target_tool_calls for s in task.stages)
        console.print(f"[bold]seed {seed}[/bold]: {len(task.stages)} stages, "
                      f"{calls} target tool calls, {len(task.requests)} requests")
        for record in task.requests:
            stages = task.stages[record.first_stage:record.first_stage + record.num_stages]
            last = record.first_stage + record.num_stages - 1
            cost = sum(s.target_tool_calls for s in stages)
            console.print(f"  stages {record.first_stage:>2}-{last:<2} {record.description}  "
                          f"({_count(record.num_stages, 'stage')}, {_count(cost, 'call')})")
        for rule in task.rules:
            console.print(f"  rule: {rule}")


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _mass(console: Console, definition: Any, first: int, seeds: int, budget: int | None) -> None:
    started = time.perf_counter()
    lengths: list[int] = []
    per_type: dict[str, list[int]] = collections.defaultdict(list)
    tasks_with: collections.Counter[str] = collections.Counter()
    text_only = 0
    for seed in range(first, first + seeds):
        task = _generate(definition, seed, budget)
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
