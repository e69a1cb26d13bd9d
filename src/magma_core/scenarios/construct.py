"""Building a preset or definition with constructor arguments (``magma run X --difficulty 2``).

:func:`construct` checks the keyword arguments against the class's constructor before
calling it: an unknown name is one line listing the accepted ones, a value of the wrong
type names the expected one (annotations of ``bool``, ``int``, ``float``, ``str``, lists,
tuples, ``Literal``, unions and ``Optional`` are checked; other annotations are left to the
constructor). A ``TypeError``/``ValueError`` the constructor raises is a one-line error too.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from magma_core.simulation.tasks import BaseTask, TaskDefinition
from magma_core.simulation.tasks.base_task import TASK_FIELDS
from magma_core.simulation.tasks.definition import DEFINITION_FIELDS
from magma_core.user_error import UserError


def accepted_arguments(cls: type) -> tuple[list[str], bool]:
    """The keyword names ``cls(...)`` takes, and whether it takes any (``**kwargs``)."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        return [], True
    names: list[str] = []
    anything = False
    fields = _generic_fields(cls)
    if fields is not None:  # BaseTask's / TaskDefinition's own **fields: their field names
        return list(fields), False
    for name, parameter in signature.parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            anything = True
        elif parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                inspect.Parameter.KEYWORD_ONLY):
            names.append(name)
    return names, anything


def check_arguments(cls: type, arguments: Mapping[str, Any], component: str) -> dict[str, Any]:
    """``arguments`` checked against ``cls``'s constructor (ints widened to floats, lists to
    tuples where annotated); raises a one-line :class:`UserError` otherwise."""
    names, anything = accepted_arguments(cls)
    for name in arguments:
        if name not in names and not anything:
            accepted = ", ".join(f"--{n.replace('_', '-')}" for n in names) or "none"
            raise UserError(f"{component} takes no constructor argument {name!r} "
                            f"(accepted: {accepted})")
    hints = _hints(cls)
    checked: dict[str, Any] = {}
    for name, value in arguments.items():
        hint = hints.get(name, Any)
        ok, converted = _fit(value, hint)
        if not ok:
            raise UserError(f"{component}: constructor argument {name!r} expects "
                            f"{_hint_text(hint)}, got {value!r}")
        checked[name] = converted
    return checked


def construct(cls: type, arguments: Mapping[str, Any] | None, component: str) -> Any:
    """``cls(**arguments)`` after :func:`check_arguments`; a ``TypeError``/``ValueError``
    from the constructor becomes a one-line :class:`UserError` naming ``component``."""
    checked = check_arguments(cls, dict(arguments or {}), component)
    try:
        return cls(**checked)
    except (TypeError, ValueError) as exc:
        shown = ", ".join(f"{k}={v!r}" for k, v in checked.items())
        raise UserError(f"{component}({shown}) could not be built: {exc}") from None


def _generic_fields(cls: type) -> tuple[str, ...] | None:
    """The field names of ``BaseTask(**fields)`` / ``TaskDefinition(**fields)`` when ``cls``
    keeps that constructor; None when it has its own."""
    init = getattr(cls, "__init__", None)
    if init is BaseTask.__init__:
        return TASK_FIELDS
    if init is TaskDefinition.__init__:
        return DEFINITION_FIELDS
    return None


def _hints(cls: type) -> dict[str, Any]:
    init = cls.__init__  # type: ignore[misc]
    try:
        return typing.get_type_hints(init)
    except Exception:  # unresolvable annotations: checked by the constructor only
        return {}


def _fit(value: Any, hint: Any) -> tuple[bool, Any]:
    """Whether ``value`` fits ``hint``, and the value converted (int -> float, list -> tuple)."""
    if hint is Any or hint is inspect.Parameter.empty:
        return True, value
    if hint is None or hint is type(None):
        return value is None, value
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        for member in args:
            ok, converted = _fit(value, member)
            if ok:
                return True, converted
        return False, value
    if origin is typing.Literal:
        return value in args, value
    if hint is bool:
        return isinstance(value, bool), value
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return ok, float(value) if ok else value
    if hint is str:
        return isinstance(value, str), value
    container = origin or hint
    if container in (list, tuple, Sequence):
        if not isinstance(value, (list, tuple)):
            return False, value
        item = args[0] if args else Any
        if container is tuple and not (len(args) == 2 and args[1] is Ellipsis or len(args) == 1):
            item = Any
        items = []
        for element in value:
            ok, converted = _fit(element, item)
            if not ok:
                return False, value
            items.append(converted)
        return True, tuple(items) if container is tuple else list(items)
    return True, value  # another class: the constructor checks it


def _hint_text(hint: Any) -> str:
    if isinstance(hint, type):
        return hint.__name__
    return str(hint).replace("typing.", "")
