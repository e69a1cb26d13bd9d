"""The summarising ``openai:`` agent (``--summarise-after CHARS``): a history condensed past a
threshold, as the predecessor's history-summarised example agent does.

Before deciding, when the conversation in ``memory["history"]`` and the summary in
``memory["summary"]`` hold more than ``summarise_after`` characters (the history as JSON, the
summary as text), one summariser call (same endpoint and model, no tools, temperature 0) writes
a new summary of the old one and the history; the summary replaces ``memory["summary"]`` and
the history is cleared, then the decision is asked as usual (the summary joins the system
message, or the prompt template's ``summary``). The summary is made once per input and shared
by all its candidates (made before their sampling); when it fails, every candidate of that
input is an error (``summary_failed``) and the decision is not asked. The summariser's call is
the candidate's first internal step (``component: "summariser"``).
"""

from __future__ import annotations

import copy
import json
import threading
from collections import OrderedDict

from magma_core.agents._http import clip
from magma_core.agents.base import Candidate
from magma_core.agents.chat_client import ChatError
from magma_core.agents.output_formats import SUMMARY_KEY, FormattedChatAgent
from magma_core.agents.reply_parsing import HISTORY_KEY, ReplyError, say_text
from magma_core.json_types import JSONDict
from magma_core.protocol.agent import AgentInput

SUMMARISER_PROMPT = (
    "You summarise a robot operator's conversation so that it can go on without it. Keep every "
    "fact still needed: the task, what was done and its results, the current state, what is "
    "left to do, rules the user gave. Answer with the summary only."
)
KEPT_SUMMARIES = 256


def conversation_size(memory: JSONDict) -> int:
    """Characters of ``memory``'s history (as JSON) and summary."""
    history = memory.get(HISTORY_KEY) or []
    summary = memory.get(SUMMARY_KEY) if isinstance(memory.get(SUMMARY_KEY), str) else ""
    return len(json.dumps(history, ensure_ascii=False)) + len(summary)


class SummarisingChatAgent(FormattedChatAgent):
    """The ``openai:`` agent whose history is condensed past ``options.summarise_after``
    characters (see the module); the same arguments as :class:`OpenAIChatAgent`."""

    component_summary = "summariser"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.threshold = int(self.options.summarise_after or 5000)
        self._summaries: OrderedDict[tuple[str, int], tuple[str, JSONDict, str | None]] = OrderedDict()
        self._summary_lock = threading.Lock()

    def decide(self, request_id: str, agent_input: AgentInput, candidate_index: int) -> Candidate:
        memory = agent_input.memory
        if not isinstance(memory.get(HISTORY_KEY, []), list) or conversation_size(memory) <= self.threshold:
            return super().decide(request_id, agent_input, candidate_index)
        summary, step, failure = self._shared_summary((request_id, agent_input.id), memory)
        if failure is not None:
            return self._fail("summary_failed", failure, memory, [step])
        condensed = copy.deepcopy(memory)
        condensed[SUMMARY_KEY] = summary
        condensed[HISTORY_KEY] = []
        candidate = super().decide(request_id, agent_input.model_copy(update={"memory": condensed}),
                                   candidate_index)
        candidate.internal_steps.insert(0, step)
        return candidate

    def _shared_summary(self, key: tuple[str, int], memory: JSONDict) -> tuple[str, JSONDict, str | None]:
        """``(summary, internal step, failure or None)``, made once per input (the first
        candidate makes it, the others wait for it)."""
        with self._summary_lock:
            entry = self._summaries.get(key)
            if entry is None:
                entry = {"done": threading.Event()}
                self._summaries[key] = entry
                while len(self._summaries) > KEPT_SUMMARIES:
                    self._summaries.popitem(last=False)
                owner = True
            else:
                owner = False
        if owner:
            try:
                entry["result"] = self._summarise(memory, key)
            finally:
                entry["done"].set()
        entry["done"].wait()
        summary, step, failure = entry.get("result", ("", {}, "the summary was not made"))
        return summary, copy.deepcopy(step), failure

    def _summarise(self, memory: JSONDict, key: tuple[str, int]) -> tuple[str, JSONDict, str | None]:
        previous = memory.get(SUMMARY_KEY) if isinstance(memory.get(SUMMARY_KEY), str) else ""
        lines = []
        for message in memory.get(HISTORY_KEY) or []:
            content = message.get("content") if isinstance(message, dict) else None
            calls = message.get("tool_calls") if isinstance(message, dict) else None
            text = content if isinstance(content, str) else ""
            if calls:
                text += " [tool calls] " + json.dumps(calls, ensure_ascii=False)
            lines.append(f"{message.get('role', '?')}: {text.strip()}")
        messages = [{"role": "system", "content": SUMMARISER_PROMPT},
                    {"role": "user", "content": f"Summary so far: {previous or '(none)'}\n\nConversation:\n"
                     + "\n".join(lines)}]
        params = {k: v for k, v in self.options.body_params(False).items() if k != "tool_choice"}
        params["temperature"] = 0.0
        step: JSONDict = {"id": f"{key[0]}:{key[1]}:summary", "component": self.component_summary,
                                "origin": "model", "input_elements": {"model": self.model,
                                                                      "characters": conversation_size(memory)}}
        try:
            reply = self.client.complete(messages, **params)
        except ChatError as exc:
            self._record(step, exc.request, exc.raw, {}, exc.latency_s, exc.attempts, exc.attempt_log)
            return "", step, f"the summary could not be made: {exc.message}"
        self._record(step, reply.request, reply.raw, reply.usage, reply.latency_s, reply.attempts, reply.attempt_log)
        try:
            summary = say_text(reply.message)
        except ReplyError as exc:
            return "", step, f"the summary could not be made: {exc.message}"
        if not summary:
            return "", step, f"the summariser answered no text: {clip(reply.raw, 300)}"
        return summary, step, None
