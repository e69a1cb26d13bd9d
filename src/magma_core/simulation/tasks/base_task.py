"""A task: the world to load, the tools, the initial situation and the ordered stages.

A ``BaseTask`` is declaration only. Subclasses set the fields as class attributes (or pass
them as keyword arguments); every instance gets its own copies of mutable values, and the
engine never mutates a task: it keeps per-episode state in its own slots.
"""

from __future__ import annotations

import copy

from magma_core.simulation.data_structures import SituationInit
from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.tasks.parameters import InitializationParameters, TaskMetadata
from magma_core.simulation.tasks.perfect_trace import PerfectTrace
from magma_core.simulation.tools import BaseToolsAPI

_REQUIRED = ("maniskill_env_id", "Tools_cls", "situation_init", "stages")
_FIELDS = (
    *_REQUIRED,
    "initialization_parameters",
    "task_metadata",
    "tools_constant",
    "name",
    "randomized_config_path",
)
TASK_FIELDS = _FIELDS  # the keyword arguments the constructor takes


class BaseTask:
    """Declaration of a task.

    Fields: ``maniskill_env_id`` (gym id of the world), ``Tools_cls`` (a ``BaseToolsAPI``
    subclass), ``situation_init`` (``SituationInit``), ``stages`` (ordered stages),
    ``initialization_parameters`` (``InitializationParameters``), ``task_metadata``,
    ``tools_constant`` (exposed to tools as ``Observation.add_constants``) and ``name``
    (default: the class name), ``randomized_config_path`` (a name-randomization YAML,
    relative to the scenario package; "" for none).
    """

    maniskill_env_id: str
    Tools_cls: type
    situation_init: SituationInit
    stages: list[BaseTaskStage]
    initialization_parameters: InitializationParameters
    task_metadata: TaskMetadata
    tools_constant: dict[str, object]
    name: str
    randomized_config_path: str = ""

    def __init__(self, **fields: object) -> None:
        unknown = set(fields) - set(_FIELDS)
        if unknown:
            raise TypeError(f"{type(self).__name__} got unknown fields {sorted(unknown)}")
        for key, value in fields.items():
            setattr(self, key, value)
        # Per-instance copies of everything mutable, so instances never share state.
        if isinstance(getattr(self, "stages", None), (list, tuple)):
            self.stages = list(self.stages)
        if hasattr(self, "situation_init"):
            self.situation_init = copy.deepcopy(self.situation_init)
        self.initialization_parameters = copy.deepcopy(
            getattr(self, "initialization_parameters", None) or InitializationParameters()
        )
        self.task_metadata = copy.deepcopy(getattr(self, "task_metadata", None) or TaskMetadata())
        constants = getattr(self, "tools_constant", None)
        self.tools_constant = {} if constants is None else copy.deepcopy(constants)
        if not isinstance(self.randomized_config_path, str):
            raise TypeError(f"{type(self).__name__}.randomized_config_path must be a str")
        if not getattr(self, "name", None):
            self.name = type(self).__name__

    # -- optional hooks --------------------------------------------------------------------
    def perfect_trace(self) -> PerfectTrace | None:
        """The reference interaction that solves the task optimally, or None if unknown."""
        return None

    # -- validation -------------------------------------------------------------------------
    def validate(self) -> None:
        """Check the declaration; raise ``TypeError`` naming the task and the broken rule."""
        cls_name = type(self).__name__
        missing = [f for f in _REQUIRED if not hasattr(self, f)]
        if missing:
            raise TypeError(f"{cls_name}: missing required task fields {missing}")
        if not isinstance(self.maniskill_env_id, str) or not self.maniskill_env_id:
            raise TypeError(f"{cls_name}: maniskill_env_id must be a non-empty str")
        if not (isinstance(self.Tools_cls, type) and issubclass(self.Tools_cls, BaseToolsAPI)):
            raise TypeError(f"{cls_name}: Tools_cls must be a BaseToolsAPI subclass")
        if not isinstance(self.situation_init, SituationInit):
            raise TypeError(f"{cls_name}: situation_init must be a SituationInit")
        if not isinstance(self.initialization_parameters, InitializationParameters):
            raise TypeError(
                f"{cls_name}: initialization_parameters must be an InitializationParameters"
            )
        if not isinstance(self.tools_constant, dict):
            raise TypeError(f"{cls_name}: tools_constant must be a dict")
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"{cls_name}: name must be a non-empty str")
        if not isinstance(self.stages, list) or not self.stages:
            raise TypeError(f"{cls_name}: stages must be a non-empty list")
        for index, stage in enumerate(self.stages):
            if not isinstance(stage, BaseTaskStage):
                raise TypeError(
                    f"{cls_name}: stage {index} is a {type(stage).__name__}, not a BaseTaskStage"
                )
            stage.validate()
        for index in range(1, len(self.stages)):
            previous, stage = self.stages[index - 1], self.stages[index]
            if previous.stage_input.flag_answer_to_user and stage.stage_input.instruction.is_empty():
                raise TypeError(
                    f"{cls_name}: stage {index} ({type(stage).__name__}) has an EmptyInstruction "
                    f"but follows stage {index - 1}, whose input has flag_answer_to_user=True: "
                    "after the final answer there would be no instruction to continue with"
                )

    def __repr__(self) -> str:
        stages = getattr(self, "stages", [])
        return f"{type(self).__name__}(name={self.name!r}, stages={len(stages)})"
