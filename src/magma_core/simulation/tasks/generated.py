"""``GeneratedTask``: a task made by the generator, serialisable to JSON and back.

The spec (``task.to_spec()``, a JSON-compatible dict) is the whole task: world, tools,
initial situation, each stage's spec and request type, the request chain, the reference
trace, and the name-randomization mapping when the task is randomized. Suites freeze
tasks this way::

    text = task_to_json(task)            # canonical JSON: sorted keys, fixed separators
    again = task_from_json(text)         # an identical GeneratedTask
    assert task_to_json(again) == text

Loading imports only the classes the spec names (tools: a ``BaseToolsAPI`` subclass; stages,
goals, errors, transitions: contract classes); nothing is evaluated.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from dataclasses import asdict, dataclass

from magma_core.json_types import JSONDict, JSONValue
from magma_core.serialization import decode_value, encode_value, load_type, type_path
from magma_core.simulation.data_structures import SituationInit, StageInput, UserInstruction
from magma_core.simulation.stage import BaseTaskStage
from magma_core.simulation.stage.scorers import BaseScorer
from magma_core.simulation.tasks.base_task import BaseTask, InitializationParameters, TaskMetadata
from magma_core.simulation.tasks.perfect_trace import PerfectTrace
from magma_core.simulation.tools import BaseToolsAPI

SPEC_FORMAT = "magma.task/1"
_SPEC_KEYS = {
    "format", "name", "definition", "seed", "max_target_tool_calls", "max_stages",
    "maniskill_env_id", "tools", "initialization", "task_metadata", "stages", "requests",
    "perfect_trace", "rules", "randomization",
}


_STAGE_KEYS = {"request_type", "spec", "flag_answer_to_user", "reset_at_end"}
#: written only when set (a suite item's scorer, a paraphrase of words the spec does not hold)
_OPTIONAL_STAGE_KEYS = {"scorer", "instruction"}


def _stage_from_entry(entry: JSONDict) -> BaseTaskStage:
    stage = BaseTaskStage.from_spec(entry["spec"])
    flag, reset = entry["flag_answer_to_user"], entry["reset_at_end"]
    if not isinstance(flag, bool) or not isinstance(reset, bool):
        raise TypeError("a stage's flag_answer_to_user and reset_at_end are bools")
    if stage.stage_input.flag_answer_to_user != flag:
        old = stage.stage_input
        stage.stage_input = StageInput(old.instruction, flag, old.linked_to_prev)
    if stage.global_parameters.reset_at_end != reset:
        stage.global_parameters = dataclasses.replace(stage.global_parameters, reset_at_end=reset)
    if entry["request_type"] is not None:
        stage.request_type = entry["request_type"]
    if entry.get("instruction") is not None:  # a suite item's words for this stage
        _set_instruction(stage, entry["instruction"])
    if entry.get("scorer") is not None:  # a suite item's scorer for this stage
        stage.scorer = BaseScorer.from_spec(entry["scorer"])
        if not stage.is_text_only():
            raise ValueError(f"{type(stage).__name__}: a scorer needs a text-only stage")
    return stage


def _set_instruction(stage: BaseTaskStage, text: JSONValue) -> None:
    """Give ``stage`` the user's words ``text`` (a paraphrase of an instruction its spec
    arguments do not hold), remembered for the spec (``instruction_override``)."""
    instruction = getattr(stage.stage_input, "instruction", None)
    if not isinstance(text, str) or not text.strip() or not isinstance(instruction, UserInstruction):
        raise ValueError(f"{type(stage).__name__}: an instruction override is a non-empty str "
                         "for a stage with a UserInstruction")
    old = stage.stage_input
    stage.stage_input = StageInput(UserInstruction(text, instruction.has_constraint),
                                   old.flag_answer_to_user, old.linked_to_prev)
    stage.instruction_override = text


@dataclass
class RequestRecord:
    """One request of the chain: its type, parameters (encoded), a description, and the
    stages it made (``first_stage`` .. ``first_stage + num_stages - 1``)."""

    request_type: str
    parameters: JSONValue
    description: str
    first_stage: int
    num_stages: int


class GeneratedTask(BaseTask):
    """A ``BaseTask`` with its provenance (definition, seed), request chain, reference trace,
    rule texts and optional randomization mapping (``RandomizationSpec.to_dict()``)."""

    def __init__(
        self,
        *,
        seed: int,
        definition: type | None = None,
        max_target_tool_calls: int | None = None,
        max_stages: int | None = None,
        requests: list[RequestRecord] | None = None,
        trace: PerfectTrace | None = None,
        rules: list[str] | None = None,
        randomization: JSONDict | None = None,
        **fields: object,
    ) -> None:
        super().__init__(**fields)
        self.seed = seed
        self.definition = definition
        self.max_target_tool_calls = max_target_tool_calls
        self.max_stages = max_stages
        self.requests = list(requests or [])
        self.trace = trace
        self.rules = list(rules or [])
        self.randomization = copy.deepcopy(randomization)

    def perfect_trace(self) -> PerfectTrace | None:
        return self.trace

    def with_randomization(self, mapping: JSONDict | None) -> GeneratedTask:
        """A copy of the task carrying ``mapping`` (a ``RandomizationSpec.to_dict()``)."""
        spec = self.to_spec()
        spec["randomization"] = copy.deepcopy(mapping)
        return GeneratedTask.from_spec(spec)

    # -- serialisation ----------------------------------------------------------------------
    def to_spec(self) -> JSONDict:
        """The full spec (JSON-compatible)."""
        params = self.initialization_parameters
        situation = self.situation_init
        metadata = self.task_metadata
        return {
            "format": SPEC_FORMAT,
            "name": self.name,
            "definition": None if self.definition is None else type_path(self.definition),
            "seed": self.seed,
            "max_target_tool_calls": self.max_target_tool_calls,
            "max_stages": self.max_stages,
            "maniskill_env_id": self.maniskill_env_id,
            "tools": type_path(self.Tools_cls),
            "initialization": {
                "env_options": encode_value(params.env_options),
                "agent_names": params.agent_names,
                "situation": {
                    "attributes": encode_value(situation.attributes),
                    "all_task_attributes": encode_value(situation.all_task_attributes),
                    "memory": encode_value(situation.memory),
                    "history": encode_value(situation.history),
                },
                "tools_constant": encode_value(self.tools_constant),
                "randomized_config_path": self.randomized_config_path,
            },
            "task_metadata": {"styles": list(metadata.styles), "difficulty": metadata.difficulty,
                              "hint": metadata.hint},
            "stages": [
                {
                    "request_type": stage.request_type,
                    "spec": stage.to_spec(),
                    # what completion-stage materialisation changes on the stage it follows,
                    # which a stage's own spec arguments may not capture
                    "flag_answer_to_user": stage.stage_input.flag_answer_to_user,
                    "reset_at_end": stage.global_parameters.reset_at_end,
                    # only when set, so that tasks without scorers keep their bytes
                    **({"scorer": stage.scorer.to_spec()} if getattr(stage, "scorer", None) else {}),
                    **({"instruction": stage.instruction_override}
                       if getattr(stage, "instruction_override", None) else {}),
                }
                for stage in self.stages
            ],
            "requests": [asdict(r) for r in self.requests],
            "perfect_trace": None if self.trace is None else self.trace.to_dict(),
            "rules": list(self.rules),
            "randomization": copy.deepcopy(self.randomization),
        }

    @classmethod
    def from_spec(cls, spec: JSONDict) -> GeneratedTask:
        """Rebuild the task of ``spec``; ``TypeError``/``ValueError`` naming what is wrong."""
        if not isinstance(spec, dict):
            raise TypeError(f"a task spec is a dict, got {type(spec).__name__}")
        if spec.get("format") != SPEC_FORMAT:
            raise ValueError(f"not a {SPEC_FORMAT} task spec (format {spec.get('format')!r})")
        if set(spec) != _SPEC_KEYS:
            raise ValueError(f"task spec keys differ: missing {sorted(_SPEC_KEYS - set(spec))}, "
                             f"unknown {sorted(set(spec) - _SPEC_KEYS)}")
        tools = load_type(spec["tools"])
        if not (isinstance(tools, type) and issubclass(tools, BaseToolsAPI)):
            raise TypeError(f"task spec tools {spec['tools']!r} is not a BaseToolsAPI subclass")
        definition = None
        if spec["definition"] is not None:
            definition = load_type(spec["definition"])
            if not isinstance(definition, type):
                raise TypeError(f"task spec definition {spec['definition']!r} is not a class")
        init = spec["initialization"]
        situation = init["situation"]
        stages = []
        for index, entry in enumerate(spec["stages"]):
            if not isinstance(entry, dict) or set(entry) - _OPTIONAL_STAGE_KEYS != _STAGE_KEYS:
                raise ValueError(f"stage {index} of the task spec needs exactly {sorted(_STAGE_KEYS)}")
            stages.append(_stage_from_entry(entry))
        trace = spec["perfect_trace"]
        return cls(
            seed=spec["seed"],
            definition=definition,
            max_target_tool_calls=spec["max_target_tool_calls"],
            max_stages=spec["max_stages"],
            requests=[RequestRecord(**r) for r in spec["requests"]],
            trace=None if trace is None else PerfectTrace.from_dict(trace),
            rules=list(spec["rules"]),
            randomization=spec["randomization"],
            maniskill_env_id=spec["maniskill_env_id"],
            Tools_cls=tools,
            situation_init=SituationInit(
                decode_value(situation["attributes"]),
                decode_value(situation["all_task_attributes"]),
                decode_value(situation["memory"]),
                decode_value(situation["history"]),
            ),
            stages=stages,
            initialization_parameters=InitializationParameters(
                env_options=decode_value(init["env_options"]), agent_names=init["agent_names"]
            ),
            task_metadata=TaskMetadata(**spec["task_metadata"]),
            tools_constant=decode_value(init["tools_constant"]),
            name=spec["name"],
            randomized_config_path=init["randomized_config_path"],
        )


def task_to_json(task: GeneratedTask, *, indent: int | None = 2) -> str:
    """The task's spec as canonical JSON (sorted keys): equal tasks give equal bytes."""
    return json.dumps(task.to_spec(), sort_keys=True, indent=indent, ensure_ascii=True)


def task_from_json(text: str) -> GeneratedTask:
    """Rebuild a task written by :func:`task_to_json`."""
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"a task spec is JSON: {exc}") from None
    return GeneratedTask.from_spec(spec)
