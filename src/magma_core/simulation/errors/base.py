"""``BaseError``: the hooks an injected error implements (``ToolErrorSupport``, a tool's opt-in,
lives in ``data_structures`` and is re-exported here)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from magma_core.serialization import SpecSerializable, contract_base
from magma_core.simulation.data_structures.error_support import (  # noqa: F401  (re-exported)
    ToolErrorSupport,
    check_no_argument_error_type,
)

if TYPE_CHECKING:
    from magma_core.simulation.data_structures import Observation, ToolExecution, ToolResult


@contract_base
class BaseError(SpecSerializable):
    """An error a stage can inject into the tools that support it.

    Subclasses must be constructible without arguments (optional arguments are fine).
    Runtime arguments are per trajectory: ``initialize`` builds them when the error is
    selected, and the engine passes them back to every hook.
    """

    required_key: ClassVar[tuple[str, ...]] = ()
    optional_key: ClassVar[tuple[str, ...]] = ()

    def get_name(self) -> str:
        """The error's unique key within a stage (the class name by default)."""
        return type(self).__name__

    def initialize(self, obs: Observation, env_id: int) -> dict[str, object] | None:
        """Runtime arguments for one trajectory; None means "selected, bind later"."""
        return {}

    def apply_pre_exec(self, tool_execution: ToolExecution, args: dict[str, object]) -> bool | None:
        """Before motion: may edit or ``fail()`` the execution. Return whether it took effect
        (None: it took effect if the execution is now failed)."""
        return False

    def apply_post_verif(self, tool_result: ToolResult, args: dict[str, object]) -> bool | None:
        """After verification: may edit the result. Return whether it took effect
        (None: it took effect if ``ok`` or ``reason`` changed)."""
        return False

    def get_description(self, args: dict[str, object] | None) -> str:
        """Text shown in statuses for this active error ("" for none)."""
        return ""

    def validate_arguments(self, args: Mapping[str, object] | None) -> dict[str, object]:
        """Check externally provided runtime arguments against ``required_key``/``optional_key``."""
        args = {} if args is None else args
        if not isinstance(args, Mapping):
            raise TypeError(f"{self.get_name()} arguments must be a dict, got {type(args).__name__}")
        missing = [k for k in self.required_key if k not in args]
        unknown = [k for k in args if k not in self.required_key and k not in self.optional_key]
        if missing or unknown:
            raise ValueError(
                f"{self.get_name()} arguments: missing {missing}, unknown {unknown} "
                f"(required {list(self.required_key)}, optional {list(self.optional_key)})"
            )
        return dict(args)

    # -- serialization -------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
