"""Checks on state that scenario code hands the engine, and the fault that names the hook.

Scenario code is untrusted for the engine's sake: a world reset, an entry transition or an
extra-state hook that raises or returns a state the engine cannot use ends only its
episode, with status ``error``, a reason naming the stage and the hook, and the traceback.
:class:`ScenarioFault` carries where it happened (``fail_with_error`` reports that, not the
step it happened in); :func:`check_returned_state` refuses a returned state tree whose
leaves differ from the world's layout (shape, dtype kind) or whose slot row is not finite.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TypeAlias

import torch


class ScenarioFault(Exception):
    """Scenario code failed ``where`` (e.g. "applying the entry transition of stage 1");
    ``error`` is what it raised (or the :class:`StateRefused` the engine raised)."""

    def __init__(self, where: str, error: BaseException) -> None:
        super().__init__(f"{type(error).__name__} while {where}: {error}")
        self.where = where
        self.error = error


class StateRefused(ValueError):
    """A state returned by scenario code that the engine refuses (the message says why)."""


def _kind(dtype: torch.dtype) -> str:
    if dtype == torch.bool:
        return "bool"
    if dtype.is_floating_point:
        return "float"
    if dtype.is_complex:
        return "complex"
    return "int"


def _shape(shape: Iterable[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


#: A state tree's shape: ``(shape, dtype)`` at every tensor leaf.
Layout: TypeAlias = dict[str, "tuple[tuple[int, ...], torch.dtype] | Layout"]


def layout_of(tree: Mapping[str, object]) -> Layout:
    """The layout of a state tree: ``(shape, dtype)`` in place of every tensor leaf."""
    out: Layout = {}
    for key, value in tree.items():
        if isinstance(value, Mapping):
            out[key] = layout_of(value)
        elif isinstance(value, torch.Tensor):
            out[key] = (tuple(value.shape), value.dtype)
    return out


def check_returned_state(new: object, layout: Layout, slot: int, what: str) -> None:
    """Refuse ``new`` (a state tree returned by ``what``) unless each of its leaves exists in
    ``layout`` (that of the batched state it was given, see :func:`layout_of`) with the same
    shape and dtype kind, and row ``slot`` of every floating leaf is finite. Leaves ``new``
    lacks keep their value."""
    if not isinstance(new, Mapping):
        raise StateRefused(f"{what} returned a {type(new).__name__}, expected a state dict")
    _check_tree(new, layout, slot, what, ())


def _check_tree(new: Mapping, ref: Layout, slot: int, what: str, path: tuple[str, ...]) -> None:
    for key, value in new.items():
        here = (*path, str(key))
        name = "/".join(here)
        if key not in ref:
            raise StateRefused(f"{what} returned {name}, which the world's state does not have")
        expected = ref[key]
        if isinstance(expected, Mapping):
            if not isinstance(value, Mapping):
                raise StateRefused(f"{what} returned {name} as a {type(value).__name__}, "
                                   "expected a dict")
            _check_tree(value, expected, slot, what, here)
            continue
        shape, dtype = expected
        if not isinstance(value, torch.Tensor):
            raise StateRefused(f"{what} returned {name} as a {type(value).__name__}, "
                               f"expected a tensor of shape {_shape(shape)}")
        if tuple(value.shape) != shape:
            raise StateRefused(f"{what} returned {name} of shape {_shape(value.shape)}, "
                               f"expected {_shape(shape)}")
        if _kind(value.dtype) != _kind(dtype):
            raise StateRefused(f"{what} returned {name} of dtype {value.dtype}, expected {dtype}")
        check_finite(value[slot], f"{what} returned {name} with", f"in slot {slot}")


def check_finite(value: torch.Tensor, prefix: str, suffix: str = "") -> None:
    """Raise :class:`StateRefused` ("PREFIX non-finite values (nan) SUFFIX") when a floating
    ``value`` holds NaN or infinity."""
    if value.is_floating_point() and not bool(torch.isfinite(value).all()):
        bad = "nan" if bool(torch.isnan(value).any()) else "inf"
        raise StateRefused(" ".join(p for p in (prefix, f"non-finite values ({bad})", suffix) if p))


def check_world(snapshot_state: Mapping[str, object], what: str) -> None:
    """Refuse a slot's saved world (leaves ``[1, ...]``) holding NaN or infinity."""
    for name, leaf in _leaves(snapshot_state, ()):
        check_finite(leaf, f"{what} left {name} with")


def _leaves(tree: Mapping[str, object], path: tuple[str, ...]) -> Iterator[tuple[str, torch.Tensor]]:
    for key, value in tree.items():
        here = (*path, str(key))
        if isinstance(value, Mapping):
            yield from _leaves(value, here)
        elif isinstance(value, torch.Tensor):
            yield "/".join(here), value
