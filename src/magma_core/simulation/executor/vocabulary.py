"""The public-names seam: an ``Executor`` whose agent side speaks randomized names.

``PublicVocabularyExecutor`` wraps the engine at its boundary and nowhere else: the engine
(tools, stages, goals, verification, judge) runs canonical names only, and the agent sees
only public ones. Per slot it holds a ``RuntimeRandomizer`` (None = no translation):

* towards the agent: the tool schema (skills included), attributes (translated and
  reordered; robot statuses as status text), the user's instructions, status messages and
  feedback (tool, parameter and attribute names), the calls of each step outcome;
* towards the engine: each call (tool, parameters, values); a call naming a hidden canonical
  value becomes a refused call with the public reason "`X` was not detected." (shown to the
  agent exactly as it sent it: a refused call is never translated); the agent's ``say``
  text, so a judge compares the answer with its canonical rule;
* the record: ``to_dict()`` adds ``"randomization"``, the slot's mapping, so exports and
  replays can show what the agent saw.

It offers the methods a run loop uses (``num_slots``, ``reset_slot``, ``agent_view``,
``submit``, ``status``, ``record``, ``end_episode``, ``close``) and those generation uses
(``snapshot``/``restore``: a snapshot carries its slot's vocabulary, so a restored slot speaks
it): the :class:`~magma_core.simulation.executor.engine.Engine` protocol. The engine's other
public attributes are forwarded, except those in canonical names (:data:`CANONICAL_ONLY`);
private ones are refused, as Gymnasium's wrappers refuse them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from magma_core.json_types import JSONDict
from magma_core.simulation.data_structures import Decision, ToolCall
from magma_core.simulation.data_structures.decisions import RefusedToolCall
from magma_core.simulation.executor.engine import Engine
from magma_core.simulation.executor.records import AgentView, CallOutcome, StepOutcome, ViewMessage
from magma_core.simulation.executor.skill_steps import ROBOT_STATUSES
from magma_core.simulation.executor.views import build_feedback
from magma_core.simulation.randomizer import CanonicalNameError, RuntimeRandomizer

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.executor.records import EpisodeRecord
    from magma_core.simulation.executor.snapshots import SlotSnapshot
    from magma_core.simulation.tasks import BaseTask

#: The engine's attributes that the wrapper does not forward: they show canonical names.
CANONICAL_ONLY = frozenset({"tool_descriptions", "stages", "task", "sim"})


class PublicVocabularyExecutor:
    """Wraps ``executor`` (an :class:`~magma_core.simulation.executor.engine.Engine`, and one
    itself); ``vocabulary`` is every slot's initial ``RuntimeRandomizer``."""

    def __init__(self, executor: Engine, vocabulary: RuntimeRandomizer | None = None) -> None:
        self.executor = executor
        self._vocabularies: list[RuntimeRandomizer | None] = [vocabulary] * executor.num_slots
        # Per slot: the engine's last feedback (as JSON) and what the agent sees instead, when
        # that step had refused calls (their text must not be translated).
        self._feedback_overrides: dict[int, tuple[str, JSONDict]] = {}

    # -- the slot's vocabulary ----------------------------------------------------------------
    def set_vocabulary(self, slot: int, vocabulary: RuntimeRandomizer | None) -> None:
        """Use ``vocabulary`` for ``slot`` from now on (set it before ``reset_slot``)."""
        self._vocabularies[slot] = vocabulary

    def vocabulary(self, slot: int) -> RuntimeRandomizer | None:
        return self._vocabularies[slot]

    # -- forwarded ----------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        """The engine's public attributes that need no translation (``num_slots``,
        ``robot_names``, ``status``, ``end_episode``, ``close``, ``task_of``, ``stages_for``,
        ``snapshot_to_bytes``, ...), as Gymnasium's wrappers forward theirs. Private ones are
        refused, and so are those that speak canonical names to an agent."""
        if name.startswith("_") or name == "executor":  # (executor: not set yet, e.g. a copy)
            raise AttributeError(f"accessing private attribute {name!r} of the wrapped engine is prohibited")
        if name in CANONICAL_ONLY:
            raise AttributeError(f"{name!r} speaks canonical names: use agent_view(slot) for what "
                                 "the agent sees")
        return getattr(self.executor, name)

    def reset(self, seed: int | Sequence[int | None] | None = None) -> None:
        self._feedback_overrides.clear()
        self.executor.reset(seed)

    def reset_slot(self, slot: int, seed: int | None = None, **options: object) -> None:
        self._feedback_overrides.pop(slot, None)
        self.executor.reset_slot(slot, seed, **options)

    # -- snapshots: the slot's vocabulary travels with them -------------------------------------
    def snapshot(self, slot: int, memory: JSONDict | None = None) -> SlotSnapshot:
        """The engine's snapshot of ``slot``, carrying the slot's vocabulary."""
        return replace(self.executor.snapshot(slot, memory), vocabulary=self._vocabularies[slot])

    def restore(self, slot: int, snapshot: SlotSnapshot) -> None:
        """Restore ``snapshot`` into ``slot``, which then speaks the snapshot's vocabulary."""
        self._feedback_overrides.pop(slot, None)
        self.executor.restore(slot, snapshot)
        self._vocabularies[slot] = snapshot.vocabulary

    def snapshot_from_bytes(self, blob: bytes, task: BaseTask | None = None,
                            vocabulary: RuntimeRandomizer | None = None) -> SlotSnapshot:
        """A stored snapshot of ``task`` spoken in ``vocabulary`` (neither is in the bytes)."""
        return replace(self.executor.snapshot_from_bytes(blob, task), vocabulary=vocabulary)

    def __enter__(self) -> PublicVocabularyExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- translated ---------------------------------------------------------------------------
    def agent_view(self, slot: int) -> AgentView:
        return public_view(self._vocabularies[slot], self.executor.agent_view(slot),
                           self._feedback_overrides.get(slot))

    def submit(self, decisions: Mapping[int, object]) -> dict[int, StepOutcome]:
        canonical: dict[int, object] = {}
        refused: dict[int, dict[int, ToolCall]] = {}
        robots = list(self.executor.robot_names)
        default_robot = robots[0] if len(robots) == 1 else None
        for slot, decision in decisions.items():
            canonical[slot], refused[slot] = canonical_decision(
                self._vocabularies[slot], decision, default_robot
            )
        outcomes = self.executor.submit(canonical)
        public: dict[int, StepOutcome] = {}
        for slot, outcome in outcomes.items():
            vocabulary = self._vocabularies[slot]
            self._feedback_overrides.pop(slot, None)
            if vocabulary is not None and refused.get(slot):
                feedback = outcome.next_view.feedback
                if isinstance(feedback, dict):
                    self._feedback_overrides[slot] = (
                        json.dumps(feedback, default=str),
                        feedback_with_refusals(vocabulary, outcome.calls, feedback, refused[slot]),
                    )
            public[slot] = public_outcome(vocabulary, outcome, refused.get(slot),
                                          self._feedback_overrides.get(slot))
        return public

    def record(self, slot: int) -> RecordWithVocabulary:
        vocabulary = self._vocabularies[slot]
        mapping = None if vocabulary is None else vocabulary.spec.to_dict()
        return RecordWithVocabulary(self.executor.record(slot), mapping)


class RecordWithVocabulary:
    """An ``EpisodeRecord`` whose ``to_dict()`` also holds the slot's mapping."""

    def __init__(self, record: EpisodeRecord, mapping: JSONDict | None) -> None:
        self.record = record
        self.randomization = mapping

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.record, name)

    def to_dict(self) -> JSONDict:
        out = self.record.to_dict()
        out["randomization"] = copy.deepcopy(self.randomization)
        return out


# -- translation functions (None = identity) ---------------------------------------------------
def canonical_decision(
    vocabulary: RuntimeRandomizer | None, decision: object, default_robot: str | None = None
) -> tuple[object, dict[int, ToolCall]]:
    """The decision in canonical names, and the calls the vocabulary refused (by index, as the
    agent sent them): those reach the engine as ``RefusedToolCall``s (aimed at
    ``default_robot`` when the agent named none). Anything that is not a ``Decision`` goes to
    the engine unchanged (it reports it)."""
    if vocabulary is None or not isinstance(decision, Decision):
        return decision, {}
    calls: list[ToolCall] = []
    refused: dict[int, ToolCall] = {}
    for index, call in enumerate(decision.tool_calls):
        if not isinstance(call, ToolCall):
            calls.append(call)
            continue
        try:
            name, arguments = vocabulary.to_canonical_call(call.name, call.arguments)
        except CanonicalNameError as exc:
            arguments = call.arguments if isinstance(call.arguments, dict) else {}
            refused[index] = call
            robot = call.target_robot_name or default_robot
            calls.append(RefusedToolCall(str(call.name), dict(arguments), robot, reason=str(exc)))
            continue
        calls.append(ToolCall(name, arguments, call.target_robot_name))
    say = decision.say if not isinstance(decision.say, str) else vocabulary.to_canonical_text(decision.say)
    return Decision(say=say, tool_calls=calls), refused


def public_feedback(vocabulary: RuntimeRandomizer, feedback: JSONDict) -> JSONDict:
    out = dict(feedback)
    for key in ("infos", "failure_reason", "error"):
        if isinstance(out.get(key), str):
            out[key] = vocabulary.to_public_status(out[key])
    calls = []
    for call in out.get("previous_tool_call") or []:
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            name, arguments = vocabulary.to_public_call(call["name"], call.get("arguments") or {})
            call = {**call, "name": name, "arguments": arguments}
        calls.append(call)
    if "previous_tool_call" in out:
        out["previous_tool_call"] = calls
    return out


def _public_message(vocabulary: RuntimeRandomizer, message: ViewMessage) -> ViewMessage:
    if message.kind == "user":
        return ViewMessage("user", vocabulary.to_public_text(message.content))
    try:
        status = json.loads(message.content) if message.content else None
    except json.JSONDecodeError:
        status = None
    if isinstance(status, dict):
        return ViewMessage("env", json.dumps(public_feedback(vocabulary, status), default=str))
    return ViewMessage("env", vocabulary.to_public_status(message.content))


def public_view(
    vocabulary: RuntimeRandomizer | None,
    view: AgentView,
    override: tuple[str, JSONDict] | None = None,
) -> AgentView:
    """The view as the agent must see it; ``override`` = (the engine's feedback as JSON, the
    agent's version) for a step with refused calls."""
    if vocabulary is None:
        return view

    def message(m: ViewMessage) -> ViewMessage:
        if override is not None and m.kind == "env" and m.content == override[0]:
            return ViewMessage("env", json.dumps(override[1], default=str))
        return _public_message(vocabulary, m)

    messages = [message(m) for m in view.messages]
    if view.feedback is None:
        feedback = None
    elif override is not None and json.dumps(view.feedback, default=str) == override[0]:
        feedback = copy.deepcopy(override[1])
    else:
        feedback = public_feedback(vocabulary, view.feedback)
    return replace(
        view,
        instruction=(messages[-1] if messages else message(ViewMessage(view.kind, view.instruction))).content,
        messages=messages,
        tools=vocabulary.get_tools(view.tools),
        attributes=_public_attributes(vocabulary, view.attributes),
        feedback=feedback,
        callable_tools=None if view.callable_tools is None else [
            vocabulary.to_public_call(name, {})[0] for name in view.callable_tools],
    )


def _public_attributes(vocabulary: RuntimeRandomizer, attributes: JSONDict) -> JSONDict:
    """The attributes in public names; ``robot_statuses`` (``RUNNING sort_all(color=red)``)
    read as status text: their skill, tool and parameter names become public too."""
    out = vocabulary.get_randomized_attributes(attributes)
    statuses = attributes.get(ROBOT_STATUSES)
    if isinstance(statuses, dict):
        out[ROBOT_STATUSES] = {robot: vocabulary.to_public_status(text) if isinstance(text, str)
                               else text for robot, text in statuses.items()}
    return out


def _public_call(vocabulary: RuntimeRandomizer, call: CallOutcome) -> CallOutcome:
    tool, arguments = vocabulary.to_public_call(call.tool, call.arguments)
    return replace(call, tool=tool, arguments=arguments,
                   message=vocabulary.to_public_status(call.message))


def public_calls(
    vocabulary: RuntimeRandomizer, calls: list[CallOutcome], refused: dict[int, ToolCall] | None
) -> list[CallOutcome]:
    """The call outcomes in public names; a refused call shows what the agent sent."""
    out = []
    for index, call in enumerate(calls):
        original = (refused or {}).get(index)
        if original is None:
            out.append(_public_call(vocabulary, call))
        else:
            arguments = original.arguments if isinstance(original.arguments, dict) else {}
            out.append(replace(call, tool=str(original.name), arguments=dict(arguments)))
    return out


def feedback_with_refusals(
    vocabulary: RuntimeRandomizer,
    calls: list[CallOutcome],
    feedback: JSONDict,
    refused: dict[int, ToolCall],
) -> JSONDict:
    """The status of a step with refused calls, rebuilt from the public call outcomes."""
    decision_calls = []
    for index, call in enumerate(feedback.get("previous_tool_call") or []):
        original = refused.get(index)
        if original is not None:
            call = {"name": str(original.name), "arguments": dict(original.arguments or {}),
                    "target_robot_name": original.target_robot_name}
        elif isinstance(call, dict) and isinstance(call.get("name"), str):
            name, arguments = vocabulary.to_public_call(call["name"], call.get("arguments") or {})
            call = {**call, "name": name, "arguments": arguments}
        decision_calls.append(call)
    reason = feedback.get("failure_reason")
    rebuilt = build_feedback(
        public_calls(vocabulary, calls, refused), decision_calls,
        failure_reason=vocabulary.to_public_status(reason) if isinstance(reason, str) else None,
    )
    for key, value in feedback.items():  # anything else the engine adds: translated
        if key not in rebuilt:
            rebuilt[key] = public_feedback(vocabulary, {key: value})[key]
    return rebuilt


def public_outcome(
    vocabulary: RuntimeRandomizer | None,
    outcome: StepOutcome,
    refused: dict[int, ToolCall] | None = None,
    override: tuple[str, JSONDict] | None = None,
) -> StepOutcome:
    """The step outcome as the agent must see it."""
    if vocabulary is None:
        return outcome
    message = vocabulary.to_public_status(outcome.message)
    if override is not None:
        message = str(override[1].get("infos", message))
    return replace(
        outcome,
        calls=public_calls(vocabulary, outcome.calls, refused),
        message=message,
        failure_reason=None if outcome.failure_reason is None
        else vocabulary.to_public_status(outcome.failure_reason),
        next_view=public_view(vocabulary, outcome.next_view, override),
    )
