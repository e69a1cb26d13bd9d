"""The provider helpers at the predecessor's paths: ``from magma_scenarios import ...``."""

from __future__ import annotations

import pytest

import magma_scenarios
from magma_core.scenarios import ScenarioError
from magma_core.simulation.skills import BaseSkill
from magma_core.simulation.tasks import BaseTask, TaskDefinition


def test_list_get_and_load_at_the_predecessors_paths() -> None:
    from magma_scenarios import (
        get_scenario,
        list_scenarios,
        load_definition,
        load_preset,
        load_skills,
    )

    ids = list_scenarios()
    assert {"cube", "sorting"} <= set(ids) and ids == sorted(ids)
    assert "PickPlace" in get_scenario("cube").presets
    assert issubclass(load_preset("cube.PickPlace"), BaseTask)
    assert issubclass(load_definition("sorting.LongSorting"), TaskDefinition)
    skills = load_skills("sorting.SortAll", ["all"])
    assert skills and all(issubclass(s, BaseSkill) for s in skills)
    assert load_skills("sorting.SortAll") == skills  # ['all'] by default


def test_register_environment_imports_the_declared_module_and_checks_it() -> None:
    magma_scenarios.register_environment("MagmaCube-v1")
    from mani_skill.utils.registration import REGISTERED_ENVS

    assert "MagmaCube-v1" in REGISTERED_ENVS
    with pytest.raises(ScenarioError, match="no installed scenario declares"):
        magma_scenarios.register_environment("NoSuchEnv-v1")
