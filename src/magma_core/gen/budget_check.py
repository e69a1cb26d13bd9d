"""Whether a generation's node budget can reach a task's last stage, said before it grows.

Trees grow breadth-first: every open situation of a depth asks its B candidates before any
situation deeper is asked, and at most K (``max_per_stage``) finishers of a stage continue
into the next. With candidates that all succeed (the reference trace's decisions), the
number of candidates asked before the first branch takes the task's last decision is

    sum over depths d < D - 1 of B × n_d, plus B,   n_0 = 1,  n_{d+1} = B × n_d
    (capped at K after a stage's last decision)

per tree, trees growing side by side (D: the reference trace's decisions, the stage
boundaries from the stages' ``target_tool_calls``). :func:`budget_warning` compares
``max_nodes`` with it (measured: ``cube.PickPlace`` B=2 first succeeds at 8 nodes for one
tree, 14 for two; ``sorting.SortAll`` needs 92, so the ``--max-nodes 40`` a user tried
gave no success). Weaker agents fail some candidates, so a budget above this is no
promise; one below it leaves every branch short of the last stage unless candidates fail
in a way that prunes the tree.
"""

from __future__ import annotations

from typing import Any

from magma_core.simulation.tasks import materialize_completion_stages


def trace_decisions(task: Any) -> int | None:
    """The decisions of ``task``'s reference trace (tool-call and message events), or None
    without one."""
    trace = task.perfect_trace() if callable(getattr(task, "perfect_trace", None)) else None
    if trace is None:
        return None
    return sum(type(event).__name__ != "UserEvent" for event in trace.events)


def stage_ends(task: Any, decisions: int) -> set[int] | None:
    """The decision indices that end a stage (from each stage's ``target_tool_calls``; a
    text-only stage: one decision), or None when they do not add up to ``decisions`` (a
    decision with several calls, an unknown target)."""
    ends, at = set(), 0
    for stage in materialize_completion_stages(task.stages, task.Tools_cls):
        calls = 1 if stage.is_text_only() and not stage.target_tool_calls else stage.target_tool_calls
        if calls is None:
            return None
        at += max(int(calls), 1)
        ends.add(at - 1)
    return ends if at == decisions else None


def nodes_to_first_finish(decisions: int, branches: int, max_per_stage: int, trees: int = 1,
                          ends: set[int] | None = None) -> int:
    """Candidates asked before the first branch takes the last of ``decisions`` (see the
    module), ``trees`` growing side by side."""
    open_situations, asked = 1, 0
    for depth in range(decisions - 1):
        asked += branches * open_situations * trees
        grown = branches * open_situations
        open_situations = min(grown, max_per_stage) if ends is not None and depth in ends else grown
        if asked > 10**9:
            break
    return asked + branches


def budget_warning(task: Any, branches: int, max_per_stage: int, max_nodes: int,
                   trees: int = 1) -> str | None:
    """A line when ``max_nodes`` is below what breadth-first growth needs before a branch
    reaches ``task``'s last stage; None when it is enough or cannot be told."""
    decisions = trace_decisions(task)
    if not decisions:
        return None
    needed = nodes_to_first_finish(decisions, branches, max_per_stage, trees, stage_ends(task, decisions))
    if max_nodes >= needed:
        return None
    return (f"--max-nodes {max_nodes} is unlikely to reach the last stage of {task.name}: its reference "
            f"trace takes {decisions} decisions, and growing {trees} tree(s) breadth-first with "
            f"{branches} candidates per situation asks about {needed} candidates before the first "
            f"branch takes the last one (with candidates that all succeed); raise --max-nodes to "
            f"{needed} or more, or lower --branches")
