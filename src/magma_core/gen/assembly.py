"""Assembling a generation from plain values: the target's tasks, the judge and the agent.

The same pieces as ``magma run``'s (:mod:`magma_core.runs.assembly`): a preset or a
definition, ``randomized`` vocabularies, the agent options and timeout, all checked before
any tree grows; every mistake the user can fix is a one-line :class:`UserError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from magma_core.agents import Agent, build_agent
from magma_core.agents.spec import AgentSpecError, parse_spec
from magma_core.agents.trace_per_task import TreeTraceAgent
from magma_core.gen.trees import TreeTasks
from magma_core.judge import Judge
from magma_core.runs.assembly import (
    build_judge,
    build_run_agent,
    check_task,
    load_episode_tasks,
    load_task,
    task_skills,
)
from magma_core.runs.spec import RunSpec
from magma_core.simulation.tasks import BaseTask
from magma_core.user_error import UserError

#: The temperature an OpenAI-compatible model samples at when none is set: B candidates must differ.
SAMPLING_TEMPERATURE = 1.0


@dataclass
class GenParts:
    """What :func:`prepare_generation` built: the engine's task (tree 0's), what each tree
    runs, the judge and the agent."""

    task: BaseTask
    trees: TreeTasks
    agent: Agent
    judge: Judge | None
    skills: list[type] | None = None  # skill classes (``--skills``); None: plain tools


def prepare_generation(
    target: str,
    agent: str = "noisy-trace",
    *,
    judge: str | None = None,
    seed: int = 0,
    trees: int = 1,
    randomized: bool = False,
    agent_options: dict[str, Any] | None = None,
    agent_timeout: float | None = None,
    target_args: dict[str, Any] | None = None,
    skills: tuple[str, ...] | None = None,
    user: str | None = None,
) -> GenParts:
    """Load ``target`` (a preset, or a definition whose tree seeds generate the tasks), check
    every tree's task with the judge, and build the agent (the trace agents replay each tree's
    reference trace in its vocabulary; ``noisy-trace`` draws its mistakes with ``seed``);
    ``target_args``: the target's constructor keyword arguments; ``skills``: skill names of
    the scenario (``("all",)``: every one), as ``magma run --skills``."""
    spec = RunSpec(target=target, agent=agent, judge=judge, seed=seed, randomized=randomized,
                   agent_options=dict(agent_options or {}), agent_timeout=agent_timeout,
                   target_args=dict(target_args or {}), skills=skills, user=user)
    skill_classes = task_skills(target, spec.skills)
    try:
        episode_tasks = load_episode_tasks(spec, skill_classes)
    except (TypeError, ValueError) as exc:
        raise UserError(f"{target}: {exc}") from None
    tree_tasks = TreeTasks(load_task(target, spec.target_args) if episode_tasks is None else _task(episode_tasks, seed, target),
                           episode_tasks)
    the_judge = build_judge(judge)
    check_task(tree_tasks.task, the_judge, target)
    if episode_tasks is not None and episode_tasks.is_definition:
        for t in range(1, trees):  # every tree's task, before any tree grows
            check_task(_task(episode_tasks, seed + t, target), the_judge, target)
    return GenParts(tree_tasks.task, tree_tasks, build_gen_agent(spec, tree_tasks), the_judge,
                    skill_classes)


def _task(episode_tasks: Any, seed: int, target: str) -> BaseTask:
    try:
        return episode_tasks.task(seed)
    except (TypeError, ValueError) as exc:
        raise UserError(f"{target} cannot make the task of seed {seed}: {exc}") from None


def build_gen_agent(spec: RunSpec, trees: TreeTasks) -> Agent:
    """The agent of ``spec.agent`` for a generation of ``trees``; an OpenAI-compatible model
    without a set temperature samples at :data:`SAMPLING_TEMPERATURE`."""
    try:
        kind = parse_spec(spec.agent).kind
    except AgentSpecError as exc:
        raise UserError(str(exc)) from None
    if kind in ("trace", "noisy-trace"):
        if spec.agent_options:
            raise UserError(f"agent option {', '.join(sorted(spec.agent_options))} does not apply to a "
                            f"{kind} agent (model options apply to openai:MODEL agents)")
        if trees.task.perfect_trace() is None:
            raise UserError(f"task {trees.task.name} has no perfect trace for the {kind} agent")
        options = {"seed": spec.seed} if kind == "noisy-trace" else {}

        def make(trace: Any) -> Any:
            return build_agent(spec.agent, trace=trace, check=False, **options)

        if trees.per_tree:  # each tree replays its own task's trace, in its own vocabulary
            return TreeTraceAgent(make)
        return make(trees.task.perfect_trace())
    agent_options = dict(spec.agent_options)
    if kind == "openai":
        agent_options.setdefault("temperature", SAMPLING_TEMPERATURE)
    return build_run_agent(spec.agent, trees.task, agent_options=agent_options,
                           timeout=spec.agent_timeout)
