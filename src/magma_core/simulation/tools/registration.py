"""``register_tool``: declare a method of a ``BaseToolsAPI`` subclass as an agent tool."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired, TypeAlias, TypedDict, cast

from magma_core.json_types import JSONDict
from magma_core.simulation.errors.base import ToolErrorSupport

TOOL_ATTRIBUTE = "__magma_tool__"
TOOL_SIGNATURE = ("self", "obs", "env_id", "params")

if TYPE_CHECKING:  # layer 1, named for the annotations only
    from magma_core.simulation.data_structures import ToolExecution

#: A tool method: ``(self, obs, env_id, params) -> ToolExecution``.
ToolFunction: TypeAlias = "Callable[..., ToolExecution]"


class ParamSpec(TypedDict):
    """One argument of a tool as ``register_tool`` checked it."""

    description: str
    type: type
    values_from: NotRequired[str]


@dataclass(frozen=True)
class ToolRegistration:
    """What ``register_tool`` recorded about one tool."""

    name: str
    description: str
    params_spec: dict[str, ParamSpec]
    optional: tuple[str, ...]
    error_supports: tuple[ToolErrorSupport, ...]
    execution_group: Hashable | None
    is_detection: bool
    function: ToolFunction

    def is_required(self, param: str) -> bool:
        return param not in self.optional

    def api_description(self) -> JSONDict:
        """What the agent sees: name, description, parameters (description, type, required,
        and ``values_from`` where declared)."""
        parameters: JSONDict = {}
        for p, spec in self.params_spec.items():
            entry: JSONDict = {
                "description": spec["description"],
                "type": spec["type"].__name__,
                "required": self.is_required(p),
            }
            if "values_from" in spec:
                entry["values_from"] = spec["values_from"]
            parameters[p] = entry
        return {"name": self.name, "description": self.description, "parameters": parameters}


def register_tool(
    description: str = "",
    params_spec: Mapping[str, Mapping[str, object]] | None = None,
    optional: Iterable[str] | None = None,
    errors: Iterable[type | ToolErrorSupport] | None = None,
    execution_group: Hashable | None = None,
    is_detection: bool = False,
) -> Callable[[ToolFunction], ToolFunction]:
    """Mark ``(self, obs, env_id, params) -> ToolExecution`` as a tool (``TypeError`` on misuse).

    ``params_spec`` maps each argument to ``{"description": str, "type": <class>}``; names in
    ``optional`` may be omitted by the agent. An entry may add ``"values_from": ATTRIBUTE``,
    the task attribute whose names the argument takes (e.g. ``"objects"``): agents may offer
    those names as the only choices. ``errors`` lists the ``BaseError`` types (or
    ``ToolErrorSupport``) whose hooks apply to this tool. ``is_detection=True`` declares that the
    tool moves nothing: the engine restores every actor after it.
    """
    if not isinstance(is_detection, bool):
        raise TypeError(f"is_detection must be a bool, got {is_detection!r}")
    if not isinstance(description, str):
        raise TypeError("description must be a str")
    if execution_group is not None and not isinstance(execution_group, Hashable):
        raise TypeError("execution_group must be hashable (usually a str) or None")
    spec = _check_params_spec(params_spec)
    optional_names = tuple(optional or ())
    for name in optional_names:
        if name not in spec:
            raise TypeError(f"optional argument {name!r} is not in params_spec")
    supports = tuple(_to_support(e) for e in (errors or ()))

    def decorate(function: ToolFunction) -> ToolFunction:
        params = list(inspect.signature(function).parameters)
        if tuple(params[:4]) != TOOL_SIGNATURE:
            raise TypeError(
                f"tool {function.__name__} must start with (self, obs, env_id, params), "
                f"got ({', '.join(params)})"
            )
        registration = ToolRegistration(
            name=function.__name__,
            description=description,
            params_spec=spec,
            optional=optional_names,
            error_supports=supports,
            execution_group=execution_group,
            is_detection=is_detection,
            function=function,
        )
        setattr(function, TOOL_ATTRIBUTE, registration)
        return function

    return decorate


def _check_params_spec(params_spec: Mapping[str, Mapping[str, object]] | None) -> dict[str, ParamSpec]:
    spec: dict[str, ParamSpec] = {}
    for name, entry in (params_spec or {}).items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"params_spec names must be non-empty str, got {name!r}")
        if not isinstance(entry, Mapping) or "description" not in entry or "type" not in entry:
            raise TypeError(f"params_spec[{name!r}] needs 'description' and 'type'")
        if not inspect.isclass(entry["type"]):
            raise TypeError(f"params_spec[{name!r}]['type'] must be a class, got {entry['type']!r}")
        source = entry.get("values_from")
        if source is not None and (not isinstance(source, str) or not source):
            raise TypeError(f"params_spec[{name!r}]['values_from'] must name a task attribute, got {source!r}")
        spec[name] = cast(ParamSpec, dict(entry))  # checked above
    return spec


def _to_support(entry: type | ToolErrorSupport) -> ToolErrorSupport:
    if isinstance(entry, ToolErrorSupport):
        return entry
    return ToolErrorSupport(entry)  # TypeError unless a no-argument BaseError subclass


def get_registration(attribute: object) -> ToolRegistration | None:
    """The registration attached to a class attribute, if it is a decorated tool."""
    registration = getattr(attribute, TOOL_ATTRIBUTE, None)
    return registration if isinstance(registration, ToolRegistration) else None
