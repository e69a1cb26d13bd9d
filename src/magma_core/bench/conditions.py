"""Benchmark conditions: transforms of a clean task spec into a perturbed one.

A scenario package provides the transforms (it knows what its stages, errors and requests
look like): a module with ``apply(condition, task_spec, options) -> (task_spec, interventions)``,
named in the suite spec (``transforms: package.module``). ``paraphrase`` applies to every
scenario and is done here (:mod:`magma_core.bench.paraphrase_condition`). ``interventions`` is a list of
``{"type", "injected_at_stage", "relevant_at_stage"}`` (stage indices of the perturbed task).
"""

from __future__ import annotations

import copy
import importlib
from types import ModuleType

from magma_core.json_types import JSONDict
from magma_core.user_error import UserError

CLEAN = "clean"
#: every condition; a suite without a ``conditions`` list compiles the DEFAULT_CONDITIONS
CONDITIONS = ("clean", "execution_error", "interruption", "mission_update", "combined", "paraphrase")
DEFAULT_CONDITIONS = CONDITIONS[:5]
#: conditions of every scenario, applied here (not by the scenario's transforms)
GENERIC = ("paraphrase",)
#: What every condition's interventions must include.
REQUIRED_INTERVENTIONS = {
    "clean": set(),
    "execution_error": {"execution_error"},
    "interruption": {"interruption"},
    "mission_update": {"mission_update"},
    "combined": {"mission_update", "execution_error"},
    "paraphrase": {"paraphrase"},
}


def load_transforms(module_name: str) -> ModuleType:
    """The transforms module ``module_name`` (it must define ``apply``)."""
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserError(f"cannot import the condition transforms {module_name!r}: {exc}") from None
    if not callable(getattr(module, "apply", None)):
        raise UserError(f"{module_name!r} has no apply(condition, task_spec, options)")
    return module


def transform(module: ModuleType, condition: str, clean_spec: JSONDict,
              options: JSONDict) -> tuple[JSONDict, list[JSONDict]]:
    """The perturbed task of ``condition`` and its interventions, checked against the
    condition's required intervention types."""
    if condition not in CONDITIONS:
        raise UserError(f"unknown condition {condition!r}; known: {', '.join(CONDITIONS)}")
    if condition == CLEAN:
        return copy.deepcopy(clean_spec), []
    try:
        if condition == "paraphrase":
            from magma_core.bench.paraphrase_condition import apply_paraphrase

            spec, interventions = apply_paraphrase(copy.deepcopy(clean_spec), dict(options))
        else:
            spec, interventions = module.apply(condition, copy.deepcopy(clean_spec), dict(options))
    except (ValueError, KeyError, TypeError) as exc:
        raise UserError(f"condition {condition} does not apply to {clean_spec['name']}: {exc}") from None
    kinds = {i["type"] for i in interventions}
    if not REQUIRED_INTERVENTIONS[condition] <= kinds:
        raise UserError(f"transform for {condition} gave interventions {sorted(kinds)}")
    return spec, interventions
