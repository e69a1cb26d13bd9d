"""A benchmark item's task as plain JSON, and back: world, tools, initial situation, stage
specs and the reference trace. Loading imports only the classes the spec names (a
``BaseToolsAPI`` subclass; contract classes for stages); nothing is evaluated.
"""

from __future__ import annotations

from typing import Any

from magma_core.serialization import decode_value, encode_value, load_type, type_path
from magma_core.simulation.data_structures import SituationInit
from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.tasks import BaseTask, PerfectTrace
from magma_core.simulation.tasks.base_task import InitializationParameters
from magma_core.simulation.tools import BaseToolsAPI

FORMAT = "magma.bench-task/1"


class BenchTask(BaseTask):
    """A task rebuilt from a bench item, carrying its reference trace."""

    def __init__(self, *, trace: PerfectTrace | None = None, **fields: Any) -> None:
        super().__init__(**fields)
        self.trace = trace

    def perfect_trace(self) -> PerfectTrace | None:
        return self.trace


def task_to_spec(task: BaseTask, name: str | None = None) -> dict[str, Any]:
    """The JSON-compatible spec of ``task`` (stages via their own ``to_spec``)."""
    situation = task.situation_init
    trace = task.perfect_trace()
    return {
        "format": FORMAT,
        "name": name or task.name,
        "maniskill_env_id": task.maniskill_env_id,
        "tools": type_path(task.Tools_cls),
        "env_options": encode_value(task.initialization_parameters.env_options),
        "agent_names": task.initialization_parameters.agent_names,
        "situation": {
            "attributes": encode_value(situation.attributes),
            "all_task_attributes": encode_value(situation.all_task_attributes),
            "memory": encode_value(situation.memory),
            "history": encode_value(situation.history),
        },
        "tools_constant": encode_value(task.tools_constant),
        "stages": [stage.to_spec() for stage in task.stages],
        "perfect_trace": None if trace is None else trace.to_dict(),
    }


def task_from_spec(spec: dict[str, Any]) -> BenchTask:
    """Rebuild the task of ``spec``; ``TypeError``/``ValueError`` naming what is wrong."""
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} task spec")
    tools = load_type(spec["tools"])
    if not (isinstance(tools, type) and issubclass(tools, BaseToolsAPI)):
        raise TypeError(f"task tools {spec['tools']!r} is not a BaseToolsAPI subclass")
    situation = spec["situation"]
    trace = spec.get("perfect_trace")
    return BenchTask(
        trace=None if trace is None else PerfectTrace.from_dict(trace),
        name=spec["name"],
        maniskill_env_id=spec["maniskill_env_id"],
        Tools_cls=tools,
        situation_init=SituationInit(
            decode_value(situation["attributes"]),
            decode_value(situation["all_task_attributes"]),
            decode_value(situation["memory"]),
            decode_value(situation["history"]),
        ),
        stages=[BaseTaskStage.from_spec(s) for s in spec["stages"]],
        initialization_parameters=InitializationParameters(
            env_options=decode_value(spec["env_options"]), agent_names=spec["agent_names"]
        ),
        tools_constant=decode_value(spec["tools_constant"]),
    )
