"""Validation of an agent's tool arguments against a ``ToolRegistration``."""

from __future__ import annotations

from magma_core.simulation.tools.registration import ToolRegistration


def check_arguments(
    registration: ToolRegistration, params: object
) -> tuple[dict[str, object] | None, str]:
    """``(arguments, "")`` when ``params`` fit the spec, else ``(None, reason)``.

    A bool is never an int or float; an int is accepted (and converted) for a float.
    """
    if not isinstance(params, dict):
        return None, f"Arguments must be a dict, got {type(params).__name__}."
    spec = registration.params_spec
    problems = []
    unknown = [k for k in params if k not in spec]
    if unknown:
        problems.append(f"Unknown arguments: {', '.join(map(str, unknown))}.")
    missing = [k for k in spec if registration.is_required(k) and k not in params]
    if missing:
        problems.append(f"Missing arguments: {', '.join(missing)}.")
    arguments: dict[str, object] = {}
    for name, value in params.items():
        if name not in spec:
            continue
        expected = spec[name]["type"]
        ok, converted = _fit(value, expected)
        if not ok:
            problems.append(
                f"Argument '{name}' must be of type {expected.__name__}, "
                f"got {type(value).__name__}."
            )
        arguments[name] = converted
    if problems:
        return None, " ".join(problems)
    return arguments, ""


def _fit(value: object, expected: type) -> tuple[bool, object]:
    if isinstance(value, bool):
        return expected in (bool, object), value
    if expected is float and isinstance(value, int):
        return True, float(value)
    return isinstance(value, expected), value
