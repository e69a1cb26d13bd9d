"""``magma run PRESET``: run episodes of a preset with an agent, store and show the results."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from magma_core.cli import CliError
from magma_core.cli.display import EpisodeProgress, make_console, results_table, totals_line

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def _int_at_least(minimum: int, wording: str):
    """An argparse type: an int >= ``minimum``, with a one-line error otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {wording}, got {text!r}")
        return value

    return parse


positive_int = _int_at_least(1, "a positive integer")
non_negative_int = _int_at_least(0, "an integer >= 0")


def run_name(text: str) -> str:
    if not NAME_PATTERN.match(text):
        raise argparse.ArgumentTypeError(
            f"run names use letters, digits, '_', '-' and '.', got {text!r}"
        )
    return text


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("run", help="run episodes of a preset with an agent")
    parser.add_argument("preset", help="scenario.Preset, e.g. cube.PickPlace")
    parser.add_argument(
        "--agent",
        default="trace",
        help="trace (the preset's reference solution), openai:MODEL[@BASE_URL] or http://HOST:PORT",
    )
    parser.add_argument("--judge", default=None, help="openai:MODEL[@BASE_URL] for JUDGE stages")
    parser.add_argument("--episodes", type=positive_int, default=1, help="episodes to run (1)")
    parser.add_argument("--slots", type=positive_int, default=1, help="episodes side by side (1)")
    parser.add_argument(
        "--workers", type=positive_int, default=1, help="worker processes, K slots each (1)"
    )
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed of episode 0 (0)")
    parser.add_argument("--out", type=Path, default=Path("runs"), help="run store folder (runs)")
    parser.add_argument("--name", type=run_name, default=None, help="run name; same name resumes")
    parser.add_argument(
        "--max-decisions", type=positive_int, default=60, help="decision cap per episode (60)"
    )
    parser.add_argument(
        "--backend", choices=("auto", "cpu", "gpu"), default="auto", help="simulator backend"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    console = make_console()
    # Imported here: `magma --help` and the other commands never pay for the engine.
    from magma_core.runs.setup import build_agent, build_judge, load_task, open_store

    started = time.perf_counter()
    task = load_task(args.preset)
    agent = build_agent(args.agent, task)
    if warning := getattr(agent, "check_warning", None):
        print(f"magma: warning: {warning}", file=sys.stderr)
    judge = build_judge(args.judge)
    name = args.name or args.preset
    config = {
        "preset": args.preset,
        "agent": args.agent,
        "judge": args.judge,
        "episodes": args.episodes,
        "slots": args.slots,
        "workers": args.workers,
        "seed": args.seed,
        "max_decisions": args.max_decisions,
    }
    with open_store(args.out) as store:
        try:
            stored = store.open_run(name, args.preset, config)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        _check_resume(stored["config"], config, name)
        store.update_config(name, config)
        done = store.finished_episodes(name)
        todo = [k for k in range(args.episodes) if k not in done]
        if done:
            console.print(f"resuming run {name!r}: {len(done)} episode(s) already stored")
        failures: list[str] = []
        if todo and min(args.workers, len(todo)) == 1:
            failures = _run_here(args, name, task, agent, judge, store, len(todo), console)
        elif todo:
            agent.close()  # built to check the spec; each worker builds its own
            failures = _run_in_workers(args, name, task, judge, store, todo, console)
        summaries = [s for s in store.episodes(name) if s.episode < args.episodes]
    console.print(results_table(name, summaries))
    console.print(totals_line(summaries, elapsed_s=time.perf_counter() - started))
    summary_path = args.out / f"{name}.summary.json"
    summary_path.write_text(json.dumps(_summary_json(name, config, summaries), indent=2))
    console.print(f"run store: {args.out / 'magma.db'}  summary: {summary_path}")
    for line in failures:  # one line per failed worker
        print(f"magma: error: {line}; run the same command again to resume", file=sys.stderr)
    return 1 if failures or any(s.status == "error" for s in summaries) else 0


def _run_here(
    args: argparse.Namespace, name: str, task: Any, agent: Any, judge: Any, store: Any,
    todo: int, console: Any,
) -> list[str]:
    """Run the ``todo`` pending episodes in this process, in one engine; a failure line when
    the agent became unreachable."""
    from magma_core.runs.loop import AgentOutage, LoopLimits, RunLoop
    from magma_core.runs.setup import open_executor

    executor = open_executor(task, min(args.slots, todo), args.seed, judge, args.backend)
    try:
        with EpisodeProgress(console, todo) as progress:
            RunLoop(
                task,
                agent,
                executor,
                store,
                name,
                episodes=args.episodes,
                seed=args.seed,
                limits=LoopLimits(max_decisions=args.max_decisions),
                listener=progress.on_event,
            ).run()
    except AgentOutage as exc:
        return [f"stopped: {exc}"]
    finally:
        executor.close()
        agent.close()
    return []


def _run_in_workers(
    args: argparse.Namespace, name: str, task: Any, judge: Any, store: Any,
    todo: list[int], console: Any,
) -> list[str]:
    """Run the ``todo`` episodes in worker processes; one line per failed worker."""
    from magma_core.runs.setup import require_judge
    from magma_core.runs.workers import WorkerJob, run_in_workers

    require_judge(task, judge)
    workers = min(args.workers, len(todo))
    job = WorkerJob(
        preset=args.preset,
        agent=args.agent,
        judge=args.judge,
        slots=min(args.slots, -(-len(todo) // workers)),
        seed=args.seed,
        backend=args.backend,
        store_path=store.path.resolve(),
        run_name=name,
        episodes=args.episodes,
        max_decisions=args.max_decisions,
    )
    with EpisodeProgress(console, len(todo)) as progress:
        return run_in_workers(job, todo, workers, progress.on_event)


def _check_resume(stored: dict[str, Any], given: dict[str, Any], name: str) -> None:
    """A resumed run must keep what decides its episodes (agent, seed)."""
    for key in ("agent", "seed", "judge"):
        if stored.get(key) != given.get(key):
            raise CliError(
                f"run {name!r} was started with --{key} {stored.get(key)!r}; "
                f"resume it with the same value or choose another --name"
            )


def _summary_json(name: str, config: dict[str, Any], summaries: list[Any]) -> dict[str, Any]:
    episodes = [s.to_dict() for s in summaries]
    return {
        "run": name,
        "config": config,
        "episodes": episodes,
        "totals": {
            "episodes": len(episodes),
            "success": sum(1 for s in summaries if s.status == "success"),
            "stages_passed": sum(s.stages_passed for s in summaries),
            "stages_total": sum(s.stages_total for s in summaries),
            "optimal": sum(s.optimal for s in summaries),
            "acceptable": sum(s.acceptable for s in summaries),
            "exceeded": sum(s.exceeded for s in summaries),
            "tool_calls": sum(s.tool_calls for s in summaries),
            "total_tokens": sum(s.total_tokens for s in summaries),
            "agent_latency_s": round(sum(s.agent_latency_s for s in summaries), 3),
            "wall_s": round(sum(s.wall_s for s in summaries), 3),
        },
    }
