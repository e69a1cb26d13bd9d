"""The spec format shared by stages, goals, errors, transitions, instructions and stage inputs.

A spec is a JSON-compatible dict with exactly two keys::

    {"type": "<module>:<QualName>", "arguments": {<encoded constructor keyword arguments>}}

Loading imports the module with ``importlib`` and walks the qualified name with ``getattr``;
nothing is evaluated. The loaded class must be a subclass of the base the caller expects
(``TypeError`` otherwise), and is rebuilt as ``cls(**arguments)``.

Argument values are encoded by :func:`encode_value`: JSON scalars, lists and string-keyed dicts
stay as they are; tuples, non-string-keyed dicts, tensors, paths, enums, poses and nested
contract objects (anything with ``to_spec()``) become tagged dicts under ``"__magma_type__"``.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import numbers
from collections.abc import Callable, Mapping
from pathlib import Path, PurePath
from typing import Self, TypeVar

import torch

from magma_core.json_types import JSONDict, JSONValue

_T = TypeVar("_T")
_C = TypeVar("_C", bound=type)

SPEC_KEYS = frozenset({"type", "arguments"})
TYPE_TAG = "__magma_type__"

# Bases a nested contract object may be loaded as. Loading a nested spec naming any other
# class is refused, so a spec can never construct arbitrary code. The contract's base classes
# (instructions, stage inputs, goals, errors, stages, transitions, stage parameters) register
# themselves with :func:`contract_base` where they are defined: this layer-1 module never
# reaches up to them. A nested spec's class imports its own base, so the base is registered
# before the check is made.
_CONTRACT_BASES: list[type] = []
# Value types defined elsewhere in layer 1 that encode as tagged dicts (e.g. ``Pose``):
# tag -> (class, encode to the tag's fields, decode from them).
_VALUE_TYPES: dict[str, tuple[type, Callable[..., JSONDict], Callable[[JSONDict], object]]] = {}


def contract_base(cls: _C) -> _C:
    """Class decorator: ``cls`` is a base that nested specs may be loaded as."""
    if cls not in _CONTRACT_BASES:
        _CONTRACT_BASES.append(cls)
    return cls


def register_value_type(
    tag: str, cls: type[_T], encode: Callable[[_T], JSONDict], decode: Callable[[JSONDict], _T],
    keys: frozenset[str] | set[str],
) -> None:
    """Encode instances of ``cls`` as ``{TYPE_TAG: tag, **encode(value)}`` (fields ``keys``)."""
    _VALUE_TYPES[tag] = (cls, encode, decode)
    _TAG_KEYS[tag] = set(keys)
    _DECODERS[tag] = decode


# -- types ---------------------------------------------------------------------------------
def type_path(cls: type) -> str:
    """``"<module>:<QualName>"`` for an importable class (``ValueError`` for a local class)."""
    qualname = cls.__qualname__
    if "<locals>" in qualname:
        raise ValueError(f"{qualname} is defined inside a function and cannot be serialised")
    return f"{cls.__module__}:{qualname}"


def load_type(path: object) -> object:
    """Import ``"<module>:<QualName>"`` (importlib + getattr only). ``ValueError`` if absent."""
    if not isinstance(path, str) or path.count(":") != 1:
        raise ValueError(f"A spec type is a '<module>:<QualName>' string, got {path!r}")
    module_name, qualname = path.split(":")
    try:
        target: object = importlib.import_module(module_name)
        for part in qualname.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"Cannot load object type {path!r}: {exc}") from exc
    return target


def contract_bases() -> tuple[type, ...]:
    """The classes a nested spec may name (those registered with :func:`contract_base`)."""
    return tuple(_CONTRACT_BASES)


# -- specs ---------------------------------------------------------------------------------
def object_to_spec(obj: object, arguments: Mapping[str, object]) -> JSONDict:
    """The spec of ``obj``, rebuilt later as ``type(obj)(**arguments)``."""
    if not isinstance(arguments, dict):
        raise TypeError(
            f"{type(obj).__name__} spec arguments must be a dict, got {type(arguments).__name__}"
        )
    return {"type": type_path(type(obj)), "arguments": encode_value(arguments)}


def object_from_spec(spec: JSONDict, expected_base: type[_T] | tuple[type[_T], ...]) -> _T:
    """Rebuild the object a spec describes; its class must subclass ``expected_base``."""
    if not isinstance(spec, dict):
        raise TypeError(f"A spec is a dict, got {type(spec).__name__}")
    if set(spec) != SPEC_KEYS:
        raise ValueError(f"A spec has exactly the keys 'type' and 'arguments', got {sorted(spec)}")
    cls = load_type(spec["type"])
    if not inspect.isclass(cls) or not issubclass(cls, expected_base):
        raise TypeError(f"Spec type {spec['type']!r} is not a subclass of {_names(expected_base)}")
    if not isinstance(spec["arguments"], dict):
        raise TypeError(f"Spec arguments must be a dict, got {type(spec['arguments']).__name__}")
    arguments = decode_value(spec["arguments"])
    if not isinstance(arguments, dict):  # a tagged value where the arguments belong
        raise TypeError(f"Spec arguments must be a dict, got {type(arguments).__name__}")
    try:
        return cls(**arguments)
    except (TypeError, ValueError):
        raise
    except Exception as exc:
        raise ValueError(f"Cannot reconstruct {spec['type']}: {exc}") from exc


def extract_constructor_arguments(obj: object) -> dict[str, object]:
    """Read each named ``__init__`` parameter of ``type(obj)`` from the same-named attribute."""
    arguments: dict[str, object] = {}
    for name, param in inspect.signature(type(obj).__init__).parameters.items():
        if name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if not hasattr(obj, name):
            raise ValueError(
                f"{type(obj).__name__} has no attribute {name!r} matching its constructor "
                "argument; define _to_spec_arguments() on the class"
            )
        arguments[name] = getattr(obj, name)
    return arguments


def _names(base: type | tuple[type, ...]) -> str:
    bases = base if isinstance(base, tuple) else (base,)
    return " or ".join(b.__name__ for b in bases)


# -- values --------------------------------------------------------------------------------
def encode_value(value: object) -> JSONValue:
    """Encode a constructor argument as JSON-compatible data (``TypeError`` if unsupported)."""
    if isinstance(value, enum.Enum):  # before str/int: StrEnum and IntEnum subclass them
        return {TYPE_TAG: "enum", "type": type_path(type(value)), "value": value.value}
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, torch.Tensor):
        tensor = value.detach().cpu()
        return {TYPE_TAG: "tensor", "dtype": str(tensor.dtype).removeprefix("torch."),
                "value": tensor.tolist()}
    if isinstance(value, PurePath):
        return {TYPE_TAG: "path", "value": str(value)}
    if isinstance(value, tuple):
        return {TYPE_TAG: "tuple", "value": [encode_value(v) for v in value]}
    if isinstance(value, list):
        return [encode_value(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            if TYPE_TAG in value:
                raise ValueError(f"A dict key may not be the reserved {TYPE_TAG!r}")
            return {k: encode_value(v) for k, v in value.items()}
        return {TYPE_TAG: "mapping",
                "value": [[encode_value(k), encode_value(v)] for k, v in value.items()]}
    for tag, (cls, encode, _) in _VALUE_TYPES.items():
        if isinstance(value, cls):
            return {TYPE_TAG: tag, **encode(value)}
    to_spec = getattr(value, "to_spec", None)
    if callable(to_spec) and not inspect.isclass(value):
        return {TYPE_TAG: "object", "spec": to_spec()}
    raise TypeError(f"Cannot serialise a value of type {type(value).__name__}")


_TAG_KEYS: dict[str, set[str]] = {
    "enum": {"type", "value"},
    "tensor": {"dtype", "value"},
    "path": {"value"},
    "tuple": {"value"},
    "mapping": {"value"},
    "object": {"spec"},
}


def decode_value(data: JSONValue) -> object:
    """Inverse of :func:`encode_value`."""
    if isinstance(data, list):
        return [decode_value(v) for v in data]
    if not isinstance(data, dict):
        return data
    if TYPE_TAG not in data:
        return {k: decode_value(v) for k, v in data.items()}
    tag = data[TYPE_TAG]
    if tag not in _TAG_KEYS:
        raise ValueError(f"Unknown {TYPE_TAG} tag {tag!r}")
    if set(data) != _TAG_KEYS[tag] | {TYPE_TAG}:
        raise ValueError(f"A {tag!r} value has keys {sorted(_TAG_KEYS[tag])}, got {sorted(data)}")
    return _DECODERS[tag](data)


def _decode_enum(data: JSONDict) -> enum.Enum:
    cls = load_type(data["type"])
    if not inspect.isclass(cls) or not issubclass(cls, enum.Enum):
        raise TypeError(f"{data['type']!r} is not an Enum")
    return cls(data["value"])


def _decode_tensor(data: JSONDict) -> torch.Tensor:
    dtype = getattr(torch, str(data["dtype"]), None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"Unknown tensor dtype {data['dtype']!r}")
    return torch.tensor(data["value"], dtype=dtype)


def _decode_path(data: JSONDict) -> Path:
    if not isinstance(data["value"], str):
        raise TypeError("A path value is a string")
    return Path(data["value"])


def _decode_tuple(data: JSONDict) -> tuple[object, ...]:
    if not isinstance(data["value"], list):
        raise TypeError("A tuple value is a list")
    return tuple(decode_value(v) for v in data["value"])


def _decode_mapping(data: JSONDict) -> dict[object, object]:
    items = data["value"]
    if not isinstance(items, list) or not all(isinstance(i, list) and len(i) == 2 for i in items):
        raise TypeError("A mapping value is a list of [key, value] pairs")
    pairs = [i for i in items if isinstance(i, list)]  # all of them (checked above)
    return {decode_value(k): decode_value(v) for k, v in pairs}


def _decode_object(data: JSONDict) -> object:
    spec = data["spec"]
    if not isinstance(spec, dict):
        raise TypeError(f"A spec is a dict, got {type(spec).__name__}")
    return object_from_spec(spec, contract_bases())


_DECODERS: dict[str, Callable[[JSONDict], object]] = {
    "enum": _decode_enum,
    "tensor": _decode_tensor,
    "path": _decode_path,
    "tuple": _decode_tuple,
    "mapping": _decode_mapping,
    "object": _decode_object,
}



class SpecSerializable:
    """Mixin: ``to_spec`` / ``from_spec`` through the class's own ``_to_spec_arguments()``,
    else through its constructor arguments read from same-named attributes."""

    def _spec_arguments(self) -> dict[str, object]:
        if "_to_spec_arguments" in type(self).__dict__:
            return self._to_spec_arguments()  # type: ignore[attr-defined]
        return extract_constructor_arguments(self)

    def to_spec(self) -> JSONDict:
        """The spec: the class's own ``_to_spec_arguments()``, else its constructor arguments."""
        return object_to_spec(self, self._spec_arguments())

    @classmethod
    def from_spec(cls, spec: JSONDict) -> Self:
        """Rebuild an instance of ``cls`` (or a subclass) from its spec."""
        return object_from_spec(spec, cls)
