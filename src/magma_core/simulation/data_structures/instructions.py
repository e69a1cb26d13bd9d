"""Instructions shown to the agent at the start of a stage."""

from __future__ import annotations

import json

from magma_core.json_types import JSONDict
from magma_core.serialization import contract_base, object_from_spec, object_to_spec


@contract_base
class Instruction:
    """Base of every instruction: some text content and a role."""

    role: str = ""

    def __init__(self, content: str, *, has_constraint: bool = False) -> None:
        self.content = content
        self.has_constraint = bool(has_constraint)

    def get_content(self) -> str:
        return self.content

    def is_empty(self) -> bool:
        return False

    def to_string(self) -> str:
        return self.content

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and self.content == other.content
            and self.has_constraint == other.has_constraint
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.content, self.has_constraint))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.content!r})"

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"content": self.content, "has_constraint": self.has_constraint}

    def to_spec(self) -> JSONDict:
        return object_to_spec(self, self._to_spec_arguments())

    @classmethod
    def from_spec(cls, spec: JSONDict) -> Instruction:
        return object_from_spec(spec, cls)


class UserInstruction(Instruction):
    """A direct instruction from the user. ``content`` must be a non-empty string."""

    role = "USER"

    def __init__(self, content: str, has_constraint: bool = False) -> None:
        if not isinstance(content, str) or not content.strip():
            raise ValueError("UserInstruction content must be a non-empty string")
        super().__init__(content, has_constraint=has_constraint)


class EmptyInstruction(Instruction):
    """No new user input: the stage continues the previous one (always linked)."""

    def __init__(self) -> None:
        super().__init__("")

    def is_empty(self) -> bool:
        return True

    def _to_spec_arguments(self) -> dict[str, object]:
        return {}


class StatusInstruction(Instruction):
    """Engine feedback shown to the agent as the next input (kind ``env``)."""

    role = "SYSTEM"

    def __init__(self, status: JSONDict) -> None:
        super().__init__(json.dumps(status, default=str))
        self.status = dict(status)

    def to_string(self) -> str:
        return str(self.status.get("infos") or self.status.get("error") or self.content)

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"status": self.status}


class StatusReturn(StatusInstruction):
    """The predecessor's name for :class:`StatusInstruction` (``timestamp`` is accepted and
    kept, never used)."""

    def __init__(self, status: JSONDict, timestamp: int = 0) -> None:
        super().__init__(status)
        self.timestamp = timestamp

    def _to_spec_arguments(self) -> dict[str, object]:
        return {"status": self.status, "timestamp": self.timestamp}


class TemplateInstruction(Instruction):
    """A user instruction described by a ``template`` (a dict) and a ``context``, to be put
    in words later (``set_content``); until then its content is ``str(template)``.

    Unlike the predecessor's, filled-in content survives serialisation.
    """

    role = "USER"

    def __init__(
        self, template: JSONDict, context: str, timestamp: int = 0,
        content: str | None = None,
    ) -> None:
        if not isinstance(template, dict):
            raise TypeError("TemplateInstruction.template must be a dict")
        super().__init__(str(template) if content is None else content)
        self.template, self.context, self.timestamp = dict(template), context, timestamp
        self._filled = content is not None

    def set_content(self, text: str) -> None:
        """Replace the content with the instruction in words."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError("TemplateInstruction content must be a non-empty string")
        self.content, self._filled = text, True

    def _to_spec_arguments(self) -> dict[str, object]:
        return {
            "template": self.template, "context": self.context, "timestamp": self.timestamp,
            "content": self.content if self._filled else None,
        }
