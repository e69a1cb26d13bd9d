"""The public-vocabulary seam: an ``Executor`` whose agent side speaks randomised names.

``PublicVocabularyExecutor`` wraps the engine at its boundary and nowhere else: the engine
(tools, stages, goals, verification, judge) runs canonical names only, and the agent sees
only public ones. Per slot it holds a ``RuntimeRandomizer`` (None = no translation):

* towards the agent: the tool schema, attributes (translated and reordered), the user's
  instructions, status messages and feedback (tool, parameter and attribute names), the
  calls of each step outcome;
* towards the engine: each call (tool, parameters, values); a call naming a hidden canonical
  value becomes a refused call with the public reason "`X` was not detected."; the agent's
  ``say`` text, so a judge compares the answer with its canonical rule;
* the record: ``to_dict()`` adds ``"randomization"``, the slot's mapping, so exports and
  replays can show what the agent saw.

It offers the methods a run loop uses (``num_slots``, ``reset_slot``, ``agent_view``,
``submit``, ``status``, ``record``, ``end_episode``, ``close``); private attributes of the
engine are not forwarded.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from magma_core.simulation.data_structures import Decision, ToolCall
from magma_core.simulation.data_structures.decisions import RefusedToolCall
from magma_core.simulation.executor.records import AgentView, CallOutcome, StepOutcome, ViewMessage
from magma_core.simulation.randomizer import CanonicalNameError, RuntimeRandomizer


class PublicVocabularyExecutor:
    """Wraps ``executor``; ``vocabulary`` is every slot's initial ``RuntimeRandomizer``."""

    def __init__(self, executor: Any, vocabulary: RuntimeRandomizer | None = None) -> None:
        self.executor = executor
        self._vocabularies: list[RuntimeRandomizer | None] = [vocabulary] * executor.num_slots

    # -- the slot's vocabulary ----------------------------------------------------------------
    def set_vocabulary(self, slot: int, vocabulary: RuntimeRandomizer | None) -> None:
        """Use ``vocabulary`` for ``slot`` from now on (set it before ``reset_slot``)."""
        self._vocabularies[slot] = vocabulary

    def vocabulary(self, slot: int) -> RuntimeRandomizer | None:
        return self._vocabularies[slot]

    # -- delegated ----------------------------------------------------------------------------
    @property
    def num_slots(self) -> int:
        return self.executor.num_slots

    @property
    def robot_names(self) -> list[str]:
        return self.executor.robot_names

    def reset(self, seed: Any = None) -> None:
        self.executor.reset(seed)

    def reset_slot(self, slot: int, seed: int | None = None, **options: Any) -> None:
        self.executor.reset_slot(slot, seed, **options)

    def status(self, slot: int) -> str:
        return self.executor.status(slot)

    def end_episode(self, slot: int, status: str, reason: str = "") -> bool:
        return self.executor.end_episode(slot, status, reason)

    def close(self) -> None:
        self.executor.close()

    def __enter__(self) -> PublicVocabularyExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- translated ---------------------------------------------------------------------------
    def agent_view(self, slot: int) -> AgentView:
        return public_view(self._vocabularies[slot], self.executor.agent_view(slot))

    def submit(self, decisions: Mapping[int, Any]) -> dict[int, StepOutcome]:
        canonical = {slot: canonical_decision(self._vocabularies[slot], d)
                     for slot, d in decisions.items()}
        outcomes = self.executor.submit(canonical)
        return {slot: public_outcome(self._vocabularies[slot], o) for slot, o in outcomes.items()}

    def record(self, slot: int) -> Any:
        vocabulary = self._vocabularies[slot]
        mapping = None if vocabulary is None else vocabulary.spec.to_dict()
        return RecordWithVocabulary(self.executor.record(slot), mapping)


class RecordWithVocabulary:
    """An ``EpisodeRecord`` whose ``to_dict()`` also holds the slot's mapping."""

    def __init__(self, record: Any, mapping: dict[str, Any] | None) -> None:
        self.record = record
        self.randomization = mapping

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.record, name)

    def to_dict(self) -> dict[str, Any]:
        out = self.record.to_dict()
        out["randomization"] = copy.deepcopy(self.randomization)
        return out


# -- translation functions (None = identity) ---------------------------------------------------
def canonical_decision(vocabulary: RuntimeRandomizer | None, decision: Any) -> Any:
    """The decision in canonical names; calls the vocabulary refuses become ``RefusedToolCall``s.
    Anything that is not a ``Decision`` goes to the engine unchanged (it reports it)."""
    if vocabulary is None or not isinstance(decision, Decision):
        return decision
    calls: list[Any] = []
    for call in decision.tool_calls:
        if not isinstance(call, ToolCall):
            calls.append(call)
            continue
        try:
            name, arguments = vocabulary.to_canonical_call(call.name, call.arguments)
        except CanonicalNameError as exc:
            arguments = call.arguments if isinstance(call.arguments, dict) else {}
            calls.append(RefusedToolCall(str(call.name), dict(arguments), call.target_robot_name,
                                         reason=str(exc)))
            continue
        calls.append(ToolCall(name, arguments, call.target_robot_name))
    say = decision.say if not isinstance(decision.say, str) else vocabulary.to_canonical_text(decision.say)
    return Decision(say=say, tool_calls=calls)


def public_feedback(vocabulary: RuntimeRandomizer, feedback: dict[str, Any]) -> dict[str, Any]:
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


def public_view(vocabulary: RuntimeRandomizer | None, view: AgentView) -> AgentView:
    """The view as the agent must see it."""
    if vocabulary is None:
        return view
    messages = [_public_message(vocabulary, m) for m in view.messages]
    last = messages[-1] if messages else ViewMessage(view.kind, view.instruction)
    return replace(
        view,
        instruction=last.content if messages else _public_message(vocabulary, last).content,
        messages=messages,
        tools=vocabulary.get_tools(view.tools),
        attributes=vocabulary.get_randomized_attributes(view.attributes),
        feedback=None if view.feedback is None else public_feedback(vocabulary, view.feedback),
    )


def _public_call(vocabulary: RuntimeRandomizer, call: CallOutcome) -> CallOutcome:
    tool, arguments = vocabulary.to_public_call(call.tool, call.arguments)
    return replace(call, tool=tool, arguments=arguments,
                   message=vocabulary.to_public_status(call.message))


def public_outcome(vocabulary: RuntimeRandomizer | None, outcome: StepOutcome) -> StepOutcome:
    """The step outcome as the agent must see it."""
    if vocabulary is None:
        return outcome
    return replace(
        outcome,
        calls=[_public_call(vocabulary, c) for c in outcome.calls],
        message=vocabulary.to_public_status(outcome.message),
        failure_reason=None if outcome.failure_reason is None
        else vocabulary.to_public_status(outcome.failure_reason),
        next_view=public_view(vocabulary, outcome.next_view),
    )
