"""Small helpers for building decisions in the engine tests."""

from __future__ import annotations

import json
from typing import Any

from magma_core.simulation.data_structures import Decision, ToolCall


def tc(name: str, robot: str | None = None, **arguments: Any) -> ToolCall:
    return ToolCall(name, arguments, robot)


def act(*calls: ToolCall | str, **arguments: Any) -> Decision:
    """``act("pick", object="cube")`` or ``act(tc(...), tc(...))``."""
    if len(calls) == 1 and isinstance(calls[0], str):
        return Decision(tool_calls=[ToolCall(calls[0], arguments)])
    return Decision(tool_calls=list(calls))  # type: ignore[arg-type]


def say(text: str) -> Decision:
    return Decision(say=text)


PICK = act("pick", object="cube")
PLACE_A = act("place", area="zone_a")
PLACE_B = act("place", area="zone_b")


def feedback(view_message_content: str) -> dict[str, Any]:
    """Decode an ``env`` message (a status dict as JSON)."""
    return json.loads(view_message_content)
