"""The one place a run is assembled: task, agent, judge and engine, from a ``RunSpec``.

The front door (:func:`magma_core.runs.run`) calls :func:`prepare` to check everything before
any episode starts, then :func:`run_episodes`, in this process or in each worker process: so
``magma run``, ``magma run --workers W`` and Python callers reach the engine through the same
function. Every mistake the user can fix is a one-line :class:`UserError`.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from magma_core.agents import Agent, build_agent, parse_spec
from magma_core.agents.chat_options import ChatOptions
from magma_core.agents.trace_per_task import SlotTraceAgent
from magma_core.judge import Judge
from magma_core.judge import from_spec as judge_from_spec
from magma_core.runs.episode_tasks import ProceduralRunLoop
from magma_core.runs.loop import Listener, RunLoop
from magma_core.scenarios import load_preset, load_skills, load_target
from magma_core.scenarios.construct import check_arguments
from magma_core.scenarios.episode_tasks import EpisodeTasks
from magma_core.simulation.executor import Executor
from magma_core.simulation.executor.task_check import stages_to_run
from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor
from magma_core.simulation.tasks import BaseTask, TaskDefinition
from magma_core.simulation.tasks.perfect_trace import user_event_mismatches
from magma_core.store import EpisodeSummary, RunStore
from magma_core.user_error import UserError

if TYPE_CHECKING:
    from magma_core.runs.spec import RunSpec


def load_task(target: str, target_args: dict[str, Any] | None = None) -> BaseTask:
    """An instance of the preset ``target`` (``scenario.Name``), built with ``target_args``
    (its constructor's keyword arguments, checked against it)."""
    task_cls = load_preset(target)
    try:
        return task_cls(**check_arguments(task_cls, target_args or {}, target))
    except (TypeError, ValueError) as exc:
        raise UserError(f"preset {target} is not a valid task: {exc}") from None


def load_episode_tasks(spec: RunSpec, skills: list[type] | None = None) -> EpisodeTasks | None:
    """What each episode runs when it is not one fixed task in canonical names (the target is
    a definition, or the run is randomised; ``skills``: the run's own, see
    :func:`task_skills`); None for a plain preset run."""
    target_cls = load_target(spec.target)
    if not issubclass(target_cls, TaskDefinition) and not spec.randomized and not spec.user:
        return None
    arguments = check_arguments(target_cls, spec.target_args, spec.target)
    try:
        target = target_cls(**arguments)
        return EpisodeTasks(target, randomized=spec.randomized, skills=skills, user=spec.user)
    except (TypeError, ValueError) as exc:
        raise UserError(f"{spec.target}: {exc}") from None


def _episode_task(tasks: EpisodeTasks, seed: int, target: str) -> BaseTask:
    try:
        return tasks.task(seed)
    except (TypeError, ValueError) as exc:
        raise UserError(f"{target} cannot make the task of seed {seed}: {exc}") from None


def check_task(task: BaseTask, judge: Judge | None, target: str) -> None:
    """The engine's own checks (:func:`stages_to_run`), as one-line user errors."""
    try:
        stages_to_run(task, judge)
    except UserError:
        raise
    except (TypeError, ValueError) as exc:
        raise UserError(f"preset {target} is not a valid task: {exc}") from None


def build_judge(spec_text: str | None, options: dict[str, Any] | None = None) -> Judge | None:
    """The judge a ``--judge`` spec names (``none``: accept any non-empty answer), or None;
    ``options``: its model options (the ``[judge]`` table of an agent config)."""
    if spec_text is None:
        return None
    return judge_from_spec(spec_text, ChatOptions(**options) if options else None)


def build_run_agent(spec_text: str, task: BaseTask, *, check: bool = True,
                    agent_options: dict[str, Any] | None = None,
                    timeout: float | None = None) -> Agent:
    """The agent ``spec_text`` names for ``task`` (the trace agent replays its perfect trace),
    with ``agent_options`` (the fields of a :class:`ChatOptions`); ``timeout`` bounds each
    request of an ``http``/``openai`` agent unless the options set their own."""
    trace = None
    options: dict[str, Any] = dict(agent_options or {})
    if parse_spec(spec_text).kind in ("trace", "noisy-trace"):
        trace = task.perfect_trace()
        if trace is None:
            raise UserError(f"task {task.name} has no perfect trace for the trace agent")
    elif timeout is not None and "timeout" not in options:
        options["timeout"] = timeout
    return build_agent(spec_text, trace=trace, check=check,
                       chat_options=ChatOptions(**options))


@dataclass
class RunParts:
    """What :func:`prepare` built and checked."""

    task: BaseTask
    agent: Agent
    judge: Judge | None
    warning: str | None = None  # from the agent's check, for the caller to show
    skills: list[type] | None = None  # skill classes; None: plain tools
    closed: bool = False
    episode_tasks: EpisodeTasks | None = None  # a definition's or a randomised run's

    def close(self) -> None:
        """Close the agent and the judge (once)."""
        if self.closed:
            return
        self.closed = True
        self.agent.close()
        closer = getattr(self.judge, "close", None)
        if closer is not None:
            closer()


def prepare(spec: RunSpec) -> RunParts:
    """Build and check the run's task, judge and agent: the task is valid, has the judge it
    needs, and the agent is usable (``http``/``openai``: ``agent.check()``)."""
    skills = task_skills(spec.target, spec.skills)
    episode_tasks = load_episode_tasks(spec, skills)
    if episode_tasks is None:
        task = load_task(spec.target, spec.target_args)
    else:
        task = _episode_task(episode_tasks, spec.seed, spec.target)
    judge = build_judge(spec.judge, spec.judge_options)
    check_task(task, judge, spec.target)
    if episode_tasks is not None and episode_tasks.is_definition and judge is None:
        for k in range(1, spec.episodes):  # every episode's task, before any episode starts
            check_task(_episode_task(episode_tasks, spec.seed + k, spec.target), None, spec.target)
    if episode_tasks is not None and parse_spec(spec.agent).kind == "trace":
        if task.perfect_trace() is None:
            raise UserError(f"task {task.name} has no perfect trace for the trace agent")
        agent: Agent = SlotTraceAgent()
    else:
        agent = build_run_agent(spec.agent, task, agent_options=spec.agent_options,
                                timeout=spec.agent_timeout)
    warnings = [getattr(agent, "check_warning", None)]
    if parse_spec(spec.agent).kind in ("trace", "noisy-trace") and not spec.user:  # a paraphrase differs
        warnings += trace_warnings(task)
    warning = "; ".join(w for w in warnings if w) or None
    return RunParts(task, agent, judge, warning, skills, episode_tasks=episode_tasks)


def trace_warnings(task: BaseTask) -> list[str]:
    """Where the task's reference trace's user texts differ from its stages' instructions."""
    trace = task.perfect_trace()
    if trace is None:
        return []
    return [f"{task.name}'s perfect trace: {problem}"
            for problem in user_event_mismatches(trace, list(task.stages))]


def task_skills(target: str, names: Sequence[str] | None) -> list[type] | None:
    """The skill classes ``names`` of the scenario (``["all"]``: every one); None when no
    names are given: the engine then uses the preset's own ``skills``, if any."""
    return None if names is None else load_skills(target, list(names))



def freeze_loaded_objects() -> None:
    """Once per process: move the objects alive now (the imported libraries, mostly) out of
    the garbage collector's way (``gc.freeze``). ManiSkill calls ``gc.collect()`` while building
    a scene, which otherwise walks all of torch and ManiSkill (about 1 s more per engine start,
    measured), and in a forked worker would copy the parent's pages; the engine's collection
    of the scenes it rebuilds (``simulation.envs.scene_release``, which freezes the same way
    when it comes first) then costs milliseconds. Later calls, and calls once anything is
    frozen, do nothing: freezing again would pin for good whatever earlier runs left for the
    collector. (Not imported from ``scene_release``: that would import the simulator, which a
    worker pool's parent does not pay for.)"""
    if gc.get_freeze_count() == 0:
        gc.freeze()


def open_executor(
    task: BaseTask, slots: int, seed: int, judge: Judge | None, backend: str,
    env_options: dict[str, Any] | None = None, skills: list[type] | None = None,
    render: bool = False, fresh_scene: bool = True, record_control: bool = False,
) -> Executor:
    """The engine with ``slots`` slots; a simulator that cannot start is a user error.
    The first engine of a process first calls :func:`freeze_loaded_objects`."""
    freeze_loaded_objects()
    try:
        return Executor(task, num_slots=slots, seed=seed, judge=judge, backend=backend,
                        env_options=env_options, skills=skills, render=render,
                        fresh_scene=fresh_scene, record_control=record_control)
    except UserError:
        raise
    except ValueError as exc:
        raise UserError(str(exc)) from None
    except RuntimeError as exc:  # e.g. --backend gpu on a machine without CUDA
        raise UserError(f"cannot start the simulator (backend {backend}): {exc}") from None


def run_episodes(
    spec: RunSpec,
    parts: RunParts,
    store: RunStore,
    *,
    slots: int,
    listener: Listener | None = None,
    episode_source: Iterable[int] | None = None,
) -> list[EpisodeSummary]:
    """Run the pending episodes of ``spec`` (or those ``episode_source`` hands out) in one
    engine with ``slots`` slots, storing each as it ends: THE path from a run to the engine,
    in this process and in every worker process. Closes the engine, not ``parts``."""
    observe_images = "images" in spec.observe
    executor = open_executor(parts.task, slots, spec.seed, parts.judge, spec.backend,
                             spec.env_options, parts.skills, render=observe_images,
                             fresh_scene=spec.fresh_scenes, record_control=spec.record_control)
    if listener is not None and hasattr(parts.agent, "on_notice"):  # retries, warnings
        parts.agent.on_notice = lambda line: listener("notice", None, line)
    options: dict[str, Any] = dict(episodes=spec.episodes, seed=spec.seed, limits=spec.limits,
                                   listener=listener, episode_source=episode_source,
                                   pacing=spec.pacing, observe_images=observe_images,
                                   control=executor.control_recorder)
    try:
        if parts.episode_tasks is None:
            loop = RunLoop(parts.task, parts.agent, executor, store, spec.run_name, **options)
        else:  # per-episode tasks and vocabularies: the engine behind the public-vocabulary seam
            loop = ProceduralRunLoop(parts.episode_tasks, parts.task, parts.agent,
                                     PublicVocabularyExecutor(executor), store, spec.run_name,
                                     **options)
        return loop.run()
    finally:
        executor.close()
