"""Entry transitions: an external event applied to selected env slots when a stage starts.

A transition edits the batched env state (``{"actors": {name: [N, 13]}, ...}``) for the slots
in ``env_ids`` only, keeps its layout, shapes and dtypes, and returns it. The engine uses the
returned dict, so a transition may edit in place or build a new one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch

from magma_core.json_types import JSONDict
from magma_core.serialization import contract_base, object_from_spec, object_to_spec
from magma_core.simulation.data_structures.state_tree import StateTree


@contract_base
class BaseStageEnvironmentTransition(ABC):
    """Subclass it and implement ``apply``; add ``_to_spec_arguments`` (its constructor
    kwargs) to make it serialisable. A transition without it constructs and runs; only
    ``to_spec`` (a stage's or task's spec, a stored task) refuses it, saying what to add."""

    @abstractmethod
    def apply(self, env_state: StateTree, env_ids: torch.Tensor) -> StateTree:
        """Change ``env_state`` for the slots ``env_ids`` and return the state."""

    def _to_spec_arguments(self) -> dict[str, object]:
        """The constructor keyword arguments that rebuild this transition (not defined here:
        serialising a transition needs its own)."""
        raise NotImplementedError(_missing_spec_arguments(type(self)))

    def to_spec(self) -> JSONDict:
        """The spec; ``_to_spec_arguments`` must be defined on the concrete class itself."""
        cls = type(self)
        if "_to_spec_arguments" not in cls.__dict__:
            raise NotImplementedError(_missing_spec_arguments(cls))
        return object_to_spec(self, self._to_spec_arguments())

    @classmethod
    def from_spec(cls, spec: JSONDict) -> BaseStageEnvironmentTransition:
        return object_from_spec(spec, cls)

    def __repr__(self) -> str:
        try:
            args = ", ".join(f"{k}={v!r}" for k, v in self._to_spec_arguments().items())
        except Exception:
            args = "..."
        return f"{type(self).__name__}({args})"


def _missing_spec_arguments(cls: type) -> str:
    return (f"{cls.__name__} cannot be serialised: add a method "
            f"`def _to_spec_arguments(self) -> dict` to {cls.__name__} itself that returns the "
            f"keyword arguments of its constructor (e.g. {{\"x\": self.x}}), so that "
            f"{cls.__name__}(**arguments) rebuilds it")
