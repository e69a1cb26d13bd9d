"""``TaskDefinition``: a recipe from which a seeded generator makes many tasks.

A definition names the world, the tools, the starting situation and the requests a user may
make; ``generate(seed)`` chains sampled requests into one long-horizon task::

    class LongSorting(TaskDefinition):
        maniskill_env_id = "MagmaSorting-v1"
        Tools_cls = SortingTools
        situation_init = SituationInit({"objects": [...], "areas": [...]})
        active_requests = [SortCube(), ClearZone(), TableQuestion()]

    task = LongSorting().generate(seed=3)          # a GeneratedTask (a BaseTask)
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import SituationInit
from magma_core.simulation.data_structures.task_state import RuleRenderer, TaskState
from magma_core.simulation.tasks.base_task import BaseTask, InitializationParameters, TaskMetadata

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.tasks.generated import GeneratedTask
    from magma_core.simulation.tasks.requests import BaseRequest

DEFAULT_MAX_TARGET_TOOL_CALLS = 40

_FIELDS = (
    "situation_init",
    "starting_state",
    "maniskill_env_id",
    "Tools_cls",
    "active_requests",
    "name",
    "randomized_config_path",
    "initialization_parameters",
    "task_metadata",
    "tools_constant",
    "max_target_tool_calls",
    "max_stages",
    "checkpoint_mode",
)
DEFINITION_FIELDS = _FIELDS  # the keyword arguments the constructor takes


class TaskDefinition:
    """A declarative task recipe (fields as class attributes or keyword arguments, all copied).

    Fields: ``maniskill_env_id``, ``Tools_cls``, ``situation_init``, ``active_requests``
    (``BaseRequest`` instances), ``starting_state`` (default: a ``TaskState`` with the
    situation's attributes and memory), ``initialization_parameters``, ``task_metadata``,
    ``tools_constant``, ``name`` (default ``"Build from <ClassName>"``),
    ``randomized_config_path`` (YAML relative to the definition's package, "" for none),
    ``max_target_tool_calls`` (the generator's budget, default 40) and ``max_stages``
    (an optional cap on the number of stages, completion stages included) and
    ``checkpoint_mode`` (``"TSR"``: generation refuses a request without a perfect trace).
    """

    RuleRenderer_cls: type[RuleRenderer] = RuleRenderer
    maniskill_env_id: str
    Tools_cls: type
    situation_init: SituationInit
    active_requests: list[BaseRequest]
    starting_state: TaskState | None = None
    randomized_config_path: str = ""
    max_target_tool_calls: int = DEFAULT_MAX_TARGET_TOOL_CALLS
    max_stages: int | None = None
    checkpoint_mode: str | None = None  # "TSR": every request must give a perfect trace

    def __init__(self, situation_init: SituationInit | None = None, **fields: object) -> None:
        unknown = set(fields) - set(_FIELDS)
        if unknown:
            raise TypeError(f"{type(self).__name__} got unknown fields {sorted(unknown)} "
                            f"(accepted: {', '.join(_FIELDS)})")
        if situation_init is not None:
            fields["situation_init"] = situation_init
        for key in _FIELDS:
            if key in fields:
                setattr(self, key, copy.deepcopy(fields[key]))
            elif key in type(self).__dict__ or hasattr(type(self), key):
                setattr(self, key, copy.deepcopy(getattr(type(self), key)))
        if not hasattr(self, "situation_init"):
            raise TypeError(f"{type(self).__name__} needs a situation_init")
        if self.starting_state is None:
            self.starting_state = TaskState(
                attributes=copy.deepcopy(self.situation_init.attributes),
                memory=copy.deepcopy(self.situation_init.memory),
            )
        self.initialization_parameters = copy.deepcopy(
            getattr(self, "initialization_parameters", None) or InitializationParameters()
        )
        self.task_metadata = copy.deepcopy(getattr(self, "task_metadata", None) or TaskMetadata())
        constants = getattr(self, "tools_constant", None)
        self.tools_constant = {} if constants is None else copy.deepcopy(constants)
        if not getattr(self, "name", None):
            self.name = f"Build from {type(self).__name__}"

    def build_default_task(self) -> BaseTask:
        """A bare ``BaseTask`` with every field copied and no stages yet."""
        missing = [f for f in ("maniskill_env_id", "Tools_cls", "active_requests")
                   if getattr(self, f, None) is None]
        if missing:
            raise ValueError(f"{type(self).__name__} is missing {', '.join(missing)}")
        return BaseTask(
            maniskill_env_id=self.maniskill_env_id,
            Tools_cls=self.Tools_cls,
            situation_init=copy.deepcopy(self.situation_init),
            stages=[],
            initialization_parameters=copy.deepcopy(self.initialization_parameters),
            task_metadata=copy.deepcopy(self.task_metadata),
            tools_constant=copy.deepcopy(self.tools_constant),
            name=self.name,
            randomized_config_path=self.randomized_config_path,
        )

    def rules(self, state: TaskState) -> list[str]:
        """The rule texts of ``state`` (through ``RuleRenderer_cls``)."""
        return self.RuleRenderer_cls().rules(state)

    def generate(
        self,
        seed: int,
        *,
        max_target_tool_calls: int | None = None,
        max_stages: int | None = None,
        start_state: TaskState | None = None,
        observer: Callable[[JSONDict], None] | None = None,
    ) -> GeneratedTask:
        """The task this definition makes for ``seed`` (a ``GeneratedTask``); see
        ``magma_core.simulation.tasks.generator.generate_task``."""
        from magma_core.simulation.tasks.generator import generate_task

        return generate_task(
            self, seed, max_target_tool_calls=max_target_tool_calls, max_stages=max_stages,
            start_state=start_state, observer=observer,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, requests={len(self.active_requests)})"
