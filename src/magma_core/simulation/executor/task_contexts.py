"""The engine context a slot's episode runs in: built once for the executor's task, and for
another task of the same world (the tasks a definition generates, each tree of a generation).

:func:`build_context` makes the executor's own context (tools bound per slot to that slot's
robots, the skills API when the task runs with skills); :func:`context_for` checks that another
task fits the executor's world, env options, tools, tools constant and robots and derives its
context; :class:`TaskContexts` remembers the most recent of those for restores.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from magma_core.simulation.data_structures.verdict import Judge
from magma_core.simulation.executor.motion import MotionDriver
from magma_core.simulation.executor.simulator import Simulator
from magma_core.simulation.executor.skill_state import SkillAPI
from magma_core.simulation.executor.slots import EngineContext
from magma_core.simulation.executor.task_check import stages_to_run
from magma_core.simulation.tasks import BaseTask

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.tools import BaseToolsAPI

#: Contexts of other tasks kept for restores (a generation's trees each run their own task).
TASK_CONTEXTS_KEPT = 64


def robot_names(task: BaseTask, sim: Simulator) -> list[str]:
    """The task's names for the simulator's robots (``ValueError`` if ``known_robots`` differs)."""
    sim_names = list(getattr(sim, "robot_names", []) or ["robot"])
    names = task.initialization_parameters.resolve_agent_names(sim_names, task.name)
    known = task.situation_init.attributes.get("known_robots")
    if known is not None and list(known) != list(names):
        raise ValueError(
            f"Task {task.name!r}: attribute known_robots={known!r} differs from the robot "
            f"names {names!r}"
        )
    return list(names)


def build_context(task: BaseTask, sim: Simulator, motion: MotionDriver, num_slots: int,
                  judge: Judge | None, skills: Sequence[type] | None) -> EngineContext:
    """The executor's own context for ``task`` on ``sim`` (``skills``: see ``Executor``)."""
    names = robot_names(task, sim)
    # One tool instance per slot, bound to that slot's robots: on CPU every slot is
    # its own simulator, so ``get_agent`` must answer with the slot's own agent.
    tools = [bound_tools(task.Tools_cls, names, sim, slot) for slot in range(num_slots)]
    ctx = EngineContext(
        task=task,
        stages=stages_to_run(task, judge),
        sim=sim,
        motion=motion,
        tools=tools,
        robot_names=names,
        tool_descriptions=task.Tools_cls.get_api_description(),
        judge=judge,
    )
    if skills is None:
        skills = getattr(task, "skills", None)
    if skills is not None:
        api = SkillAPI(ctx.tool_descriptions, skills)
        ctx.skills = api
        ctx.tool_descriptions = api.descriptions()
    return ctx


def context_for(own: EngineContext, task: BaseTask) -> EngineContext:
    """The engine context of another task on ``own``'s world and tools."""
    if not isinstance(task, BaseTask):
        raise TypeError(f"reset_slot needs a BaseTask, got {type(task).__name__}")
    same = (
        task.maniskill_env_id == own.task.maniskill_env_id
        and task.Tools_cls is own.task.Tools_cls
        and task.initialization_parameters == own.task.initialization_parameters
        and task.tools_constant == own.task.tools_constant
    )
    if not same:
        raise ValueError(
            f"Task {task.name!r} cannot run on this executor: its world, env options, "
            f"tools, tools constant or robots differ from {own.task.name!r}'s"
        )
    stages = stages_to_run(task, own.judge)
    robot_names(task, own.sim)
    return dataclasses.replace(own, task=task, stages=stages)


class TaskContexts:
    """The contexts of tasks other than the executor's, most recent last, at most
    :data:`TASK_CONTEXTS_KEPT` (each context keeps its task, and so its id, alive)."""

    def __init__(self, own: EngineContext) -> None:
        self.own = own
        self._kept: dict[int, EngineContext] = {}

    def of(self, task: BaseTask | None, running: Sequence[EngineContext]) -> EngineContext:
        """The context of ``task``: the executor's, a slot's (``running``), a remembered one,
        or a new one (checked by :func:`context_for`)."""
        if task is None or task is self.own.task:
            return self.own
        for ctx in running:
            if ctx.task is task:
                return ctx
        ctx = self._kept.pop(id(task), None)
        if ctx is None or ctx.task is not task:
            ctx = context_for(self.own, task)
        self._kept[id(task)] = ctx
        while len(self._kept) > TASK_CONTEXTS_KEPT:
            self._kept.pop(next(iter(self._kept)))
        return ctx


def bound_tools(tools_cls: type, robot_names: list[str], sim: Simulator, slot: int) -> BaseToolsAPI:
    """A ``tools_cls`` instance bound to the robots of ``slot`` (named as the task names them)."""
    tools = tools_cls()
    tools.bind_robots(dict(zip(robot_names, sim.robots(slot).values(), strict=True)))
    return tools
