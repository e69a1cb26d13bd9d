"""Turning command-line choices into the objects a run needs; user errors become ``CliError``."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from magma_core.cli import CliError
from magma_core.runs.store import RunStore


def load_task(preset: str) -> Any:
    """Instantiate and validate the preset's task."""
    from magma_core.scenarios import ScenarioError, load_preset

    try:
        task_cls = load_preset(preset)
    except ScenarioError as exc:
        raise CliError(str(exc)) from None
    try:
        task = task_cls()
        task.validate()
    except (TypeError, ValueError) as exc:
        raise CliError(f"preset {preset} is not a valid task: {exc}") from None
    return task


def build_agent(spec_text: str, task: Any) -> Any:
    """The agent a ``--agent`` spec names, checked before any episode starts (``http`` and
    ``openai`` agents: ``agent.check()``; a failure closes the agent and is a ``CliError``)."""
    from magma_core.agents import AgentCheckError
    from magma_core.agents.spec import AgentSpecError, from_spec, parse_spec

    try:
        spec = parse_spec(spec_text)
        trace = None
        if spec.kind == "trace":
            trace = task.perfect_trace()
            if trace is None:
                raise CliError(f"task {task.name} has no perfect trace for the trace agent")
        agent = from_spec(spec_text, trace=trace)
    except AgentSpecError as exc:
        raise CliError(str(exc)) from None
    if spec.kind in ("http", "openai"):
        try:
            agent.check()
        except AgentCheckError as exc:
            agent.close()
            where = f"agent at {spec.url}" if spec.kind == "http" else f"agent {spec_text.strip()}"
            raise CliError(f"{where} is not usable: {exc}") from None
    return agent


def build_judge(spec_text: str | None) -> Any:
    """The judge a ``--judge`` spec names, or None."""
    if spec_text is None:
        return None
    from magma_core.agents.spec import AgentSpecError
    from magma_core.judge import from_spec

    try:
        return from_spec(spec_text)
    except AgentSpecError as exc:
        raise CliError(str(exc)) from None


def require_judge(task: Any, judge: Any) -> None:
    """Refuse, in one line, a task whose answers a judge validates when there is no judge."""
    from magma_core.simulation.tasks import judged_stage_indices, materialize_completion_stages

    if judge is None and judged_stage_indices(
        materialize_completion_stages(task.stages, task.Tools_cls)
    ):
        raise CliError(
            f"{task.name} has stages validated by a judge: pass --judge openai:MODEL[@BASE_URL]"
        )


def open_executor(task: Any, slots: int, seed: int, judge: Any, backend: str) -> Any:
    """The engine with ``slots`` slots; a task that needs a judge without one is refused."""
    from magma_core.simulation.executor import Executor

    require_judge(task, judge)
    try:
        return Executor(task, num_slots=slots, seed=seed, judge=judge, backend=backend)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    except RuntimeError as exc:  # e.g. --backend gpu on a machine without CUDA
        raise CliError(f"cannot start the simulator (backend {backend}): {exc}") from None


def open_store(folder: Path, *, create: bool = True) -> RunStore:
    """The run store ``folder/magma.db``; a missing (when not ``create``), unwritable or
    corrupt store is a one-line ``CliError``."""
    path = folder / "magma.db"
    if not create and not path.exists():
        raise CliError(f"no run store at {path}")
    try:
        return RunStore(path)
    except (OSError, sqlite3.Error) as exc:
        raise CliError(f"cannot open the run store {path}: {exc}") from None
