"""Batched env-state operations (pure torch, no simulator import).

A batched env state is a nested dict of tensors with a leading slot dimension, in
ManiSkill's ``get_state_dict()`` layout::

    {"actors": {name: [N, 13]}, "articulations": {name: [N, D]},
     "magma_extra_state": {key: [N, ...]}}

Actor rows start with xyz, then the wxyz quaternion, linear and angular velocity. This
module selects and assigns slots, applies tools' ``EnvStateUpdate``s and protects actors a
tool was not allowed to move. Every function works on any such tree; none knows a scenario.

``TaskState`` and ``RuleRenderer`` (the generation-time task state, plain data from
``simulation.data_structures``) are re-exported here, at the predecessor's import path.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import cast

import torch

from magma_core.simulation.data_structures import EnvStateUpdate
from magma_core.simulation.data_structures.state_tree import StateNode, StateTree
from magma_core.simulation.data_structures.task_state import RuleRenderer, TaskState

__all__ = [
    "RuleRenderer",
    "StateNode",
    "StateTree",
    "TaskState",
    "apply_env_state_updates",
    "assign_slot",
    "clone_state",
    "map_state",
    "merge_allowed_moving_actors",
    "restore_disallowed_actors",
    "select_slot",
    "stack_states",
    "states_equal",
]

logger = logging.getLogger(__name__)


# -- tree helpers -------------------------------------------------------------------------
def map_state(state: Mapping[str, StateNode], fn: Callable[[torch.Tensor], torch.Tensor]) -> StateTree:
    """A new tree with ``fn`` applied to every tensor leaf (other leaves are kept as they are)."""
    out: StateTree = {}
    for key, value in state.items():
        if isinstance(value, Mapping):
            out[key] = map_state(value, fn)
        elif isinstance(value, torch.Tensor):
            out[key] = fn(value)
        else:
            out[key] = value
    return out


def clone_state(state: Mapping[str, StateNode]) -> StateTree:
    """A deep copy of a state tree (tensors cloned)."""
    return map_state(state, lambda t: t.clone())


def select_slot(state: Mapping[str, StateNode], slot: int) -> StateTree:
    """A one-slot copy of ``state``: every leaf becomes ``leaf[slot:slot+1].clone()``."""
    return map_state(state, lambda t: t[slot : slot + 1].clone())


def assign_slot(
    state: StateTree, slot: int, slot_state: Mapping[str, StateNode], source_slot: int = 0
) -> StateTree:
    """Write ``slot_state``'s row ``source_slot`` into row ``slot`` of ``state``, in place.

    Every leaf of ``slot_state`` must exist in ``state``; leaves of ``state`` that
    ``slot_state`` lacks are left alone. Returns ``state``.
    """
    for key, value in slot_state.items():
        if key not in state:
            raise KeyError(f"state has no key {key!r}")
        target = state[key]
        if isinstance(value, Mapping):
            if not isinstance(target, dict):
                raise TypeError(f"state[{key!r}] is a tensor where slot_state holds a tree")
            assign_slot(target, slot, value, source_slot)
        elif isinstance(value, torch.Tensor):
            if not isinstance(target, torch.Tensor):
                raise TypeError(f"state[{key!r}] is a tree where slot_state holds a tensor")
            target[slot] = value[source_slot].to(device=target.device, dtype=target.dtype)
    return state


def stack_states(states: Sequence[Mapping[str, StateNode]]) -> StateTree:
    """Concatenate per-slot trees (leaves ``[1, ...]``) into one batched tree along dim 0."""
    if len(states) == 1:
        return map_state(states[0], lambda t: t)
    first = states[0]
    out: StateTree = {}
    for key, value in first.items():
        if isinstance(value, Mapping):
            out[key] = stack_states([cast(Mapping[str, StateNode], s[key]) for s in states])
        elif isinstance(value, torch.Tensor):
            out[key] = torch.cat([cast(torch.Tensor, s[key]) for s in states], dim=0)
        else:
            out[key] = [s[key] for s in states]
    return out


def states_equal(a: Mapping[str, StateNode], b: Mapping[str, StateNode]) -> bool:
    """True when both trees have the same keys and bit-identical tensor leaves."""
    if set(a) != set(b):
        return False
    for key, value in a.items():
        other = b[key]
        if isinstance(value, Mapping):
            if not isinstance(other, Mapping) or not states_equal(value, other):
                return False
        elif isinstance(value, torch.Tensor):
            if not isinstance(other, torch.Tensor) or not torch.equal(value, other):
                return False
        elif value != other:
            return False
    return True


# -- EnvStateUpdate ------------------------------------------------------------------------
def apply_env_state_updates(
    env_state: StateTree, env_id: int, updates: Iterable[EnvStateUpdate]
) -> StateTree:
    """Assign each update's value to row ``env_id`` of the leaf at its path, in place.

    The value is converted to the leaf's dtype and device and must broadcast to one row of
    the leaf; a floating value must be finite and may not go into an integer or bool leaf. All or nothing: every update is checked first and nothing changes if any fails.

    Raises:
        KeyError: a path does not exist (the message names the path).
        TypeError: the path ends on something that is not a tensor, or the value cannot be
            converted to a tensor.
        ValueError: the value's shape does not fit one row of the leaf.
        IndexError: ``env_id`` is not a slot of the leaf.
    """
    env_id = int(env_id)
    staged: list[tuple[torch.Tensor, torch.Tensor]] = []
    for update in updates:
        leaf = _resolve_leaf(env_state, update.path)
        if leaf.dim() == 0:
            raise ValueError(f"leaf at {update.path!r} has no slot dimension")
        if not 0 <= env_id < leaf.shape[0]:
            raise IndexError(
                f"slot {env_id} out of range for {update.path!r} with {leaf.shape[0]} slots"
            )
        staged.append((leaf, _convert_value(update.value, leaf, update.path)))
    for leaf, value in staged:
        leaf[env_id] = value
    return env_state


def _resolve_leaf(state: Mapping[str, StateNode], path: tuple[str, ...]) -> torch.Tensor:
    node: object = state
    for depth, part in enumerate(path):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(f"env state has no path {path!r} (missing {path[: depth + 1]!r})")
        node = node[part]
    if not isinstance(node, torch.Tensor):
        raise TypeError(f"env state leaf at {path!r} is a {type(node).__name__}, not a tensor")
    return node


def _fits_exactly(tensor: torch.Tensor, dtype: torch.dtype) -> bool:
    """Whether floating ``tensor`` holds whole numbers (0/1 for a bool ``dtype``)."""
    if dtype == torch.bool:
        return bool(((tensor == 0) | (tensor == 1)).all())
    return bool((tensor == tensor.round()).all())


def _brief(tensor: torch.Tensor) -> str:
    values = tensor.reshape(-1)[:4].tolist()
    return str(values if tensor.numel() > 1 else values[0]) if tensor.numel() else "[]"


def _convert_value(value: object, leaf: torch.Tensor, path: tuple[str, ...]) -> torch.Tensor:
    try:
        tensor = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(f"cannot convert value for {path!r} to {leaf.dtype}: {exc}") from exc
    if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
        raise ValueError(f"value for {path!r} holds non-finite numbers (nan or inf)")
    if tensor.is_complex() or (tensor.is_floating_point() and not leaf.is_floating_point()
                               and not _fits_exactly(tensor, leaf.dtype)):
        raise TypeError(f"value {_brief(tensor)} of dtype {tensor.dtype} for {path!r} does not "
                        f"fit the leaf's {leaf.dtype} exactly")
    try:
        tensor = tensor.to(device=leaf.device, dtype=leaf.dtype)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(f"cannot convert value for {path!r} to {leaf.dtype}: {exc}") from exc
    row_shape = leaf.shape[1:]
    while tensor.dim() > len(row_shape) and tensor.shape[0] == 1:
        tensor = tensor[0]
    try:
        return torch.broadcast_to(tensor, row_shape).clone()
    except RuntimeError as exc:
        raise ValueError(
            f"value of shape {tuple(tensor.shape)} does not fit a row {tuple(row_shape)} "
            f"of {path!r}"
        ) from exc


# -- actor protection ----------------------------------------------------------------------
def merge_allowed_moving_actors(lists: Iterable[Sequence[str] | None]) -> list[str] | None:
    """Combine the ``allowed_moving_actors`` of several tool calls.

    One None (no protection requested) gives None; otherwise the union, in first-seen order.
    """
    merged: list[str] = []
    for names in lists:
        if names is None:
            return None
        for name in names:
            if name not in merged:
                merged.append(name)
    return merged


def restore_disallowed_actors(
    state: StateTree,
    source_state: Mapping[str, StateNode],
    env_id: int,
    allowed: Sequence[str] | None,
    *,
    source_slot: int | None = None,
) -> StateTree:
    """Give every actor not in ``allowed`` its row back from ``source_state``, in place.

    ``allowed=None`` changes nothing. Row ``env_id`` of ``state["actors"][name]`` receives
    row ``source_slot`` (default ``env_id``) of ``source_state["actors"][name]``; pass
    ``source_slot=0`` when the source is a one-slot snapshot. Articulations and extra state
    are never touched. An unknown name in ``allowed`` or a source whose actor layout does not
    match skips protection entirely, with a warning. Returns ``state``.
    """
    if allowed is None:
        return state
    env_id = int(env_id)
    src_row = env_id if source_slot is None else int(source_slot)
    actors = state.get("actors")
    source_actors = source_state.get("actors")
    if not isinstance(actors, Mapping) or not isinstance(source_actors, Mapping):
        logger.warning("actor protection skipped: state or source has no 'actors' entry")
        return state
    unknown = [name for name in allowed if name not in actors]
    if unknown:
        logger.warning(
            "actor protection skipped: allowed_moving_actors names unknown actors %s (known: %s)",
            unknown,
            sorted(actors),
        )
        return state
    protected = [name for name in actors if name not in allowed]
    for name in protected:
        leaf, src = actors[name], source_actors.get(name)
        if (
            not isinstance(leaf, torch.Tensor)
            or not isinstance(src, torch.Tensor)
            or leaf.shape[1:] != src.shape[1:]
            or not 0 <= env_id < leaf.shape[0]
            or not 0 <= src_row < src.shape[0]
        ):
            logger.warning(
                "actor protection skipped: source layout for actor %r does not match", name
            )
            return state
    for name in protected:  # every one a tensor of a matching layout (checked above)
        leaf, src = cast(torch.Tensor, actors[name]), cast(torch.Tensor, source_actors[name])
        leaf[env_id] = src[src_row].to(device=leaf.device, dtype=leaf.dtype)
    return state
