"""TaskState, constraints and the rule renderer: the generation-time model."""

from __future__ import annotations

import pytest

from magma_core.simulation.constraints import AttributesModifConstraint, BaseConstraint
from magma_core.simulation.requests import BaseRequest
from magma_core.simulation.state import RuleRenderer, TaskState
from magma_core.simulation.tasks import ForbidConstraint


def test_defaults():
    state = TaskState()
    assert state.attributes == {"objects": [], "target_areas": []}
    assert state.memory == {}
    assert state.relations == {"object_type": {}, "type_area": {}, "object_area": {}}
    assert state.properties == {"forbidden_objects": [], "forbidden_areas": []}
    assert state.constraints_history == []
    assert TaskState().attributes is not state.attributes  # no shared defaults


def test_bad_fields_are_refused():
    with pytest.raises(TypeError, match="attributes"):
        TaskState(attributes=["red_cube"])
    with pytest.raises(TypeError, match="constraints_history"):
        TaskState(constraints_history={})


def test_clone_copies_deeply_but_shares_constraint_objects():
    state = TaskState(attributes={"objects": ["a"]})
    ForbidConstraint("objects", "a").apply(state)
    clone = state.clone()
    clone.attributes["objects"].append("b")
    clone.properties["forbidden_objects"].append("b")
    assert state.attributes == {"objects": ["a"]}
    assert state.properties["forbidden_objects"] == ["a"]
    assert clone.constraints_history == state.constraints_history
    assert clone.constraints_history is not state.constraints_history
    assert clone.constraints_history[0] is state.constraints_history[0]


class _Outdated(BaseConstraint):
    def outdated(self, state):
        return True


def test_recompute_from_base_replays_recent_constraints_and_drops_outdated_ones():
    base = TaskState(attributes={"objects": ["a", "b"]})
    ForbidConstraint("objects", "a").apply(base)
    state = base.clone()
    state.attributes = {"objects": ["a", "b", "c"]}
    state.memory = {"note": 1}
    state.properties["scratch"] = True  # not a constraint: lost on recompute
    ForbidConstraint("areas", "zone_c").apply(state)
    _Outdated().apply(state)
    fresh = state.recompute_from_base(base)
    assert fresh.attributes == {"objects": ["a", "b", "c"]}
    assert fresh.memory == {"note": 1}
    assert "scratch" not in fresh.properties
    assert fresh.properties["forbidden_areas"] == ["zone_c"]
    assert fresh.properties["forbidden_objects"] == ["a"]
    assert [type(c).__name__ for c in fresh.constraints_history] == [
        "ForbidConstraint", "ForbidConstraint"]


def test_attributes_modif_constraint_replaces_attributes_with_a_copy():
    new = {"objects": ["x"], "areas": ["z"]}
    state = AttributesModifConstraint(new).apply(TaskState())
    new["objects"].append("y")
    assert state.attributes == {"objects": ["x"], "areas": ["z"]}
    assert len(state.constraints_history) == 1
    with pytest.raises(TypeError):
        AttributesModifConstraint(["x"])


def test_forbid_constraint_checks_its_kind_and_adds_once():
    state = TaskState()
    ForbidConstraint("areas", "zone_a").apply(state)
    ForbidConstraint("areas", "zone_a").apply(state)
    assert state.properties["forbidden_areas"] == ["zone_a"]
    with pytest.raises(ValueError, match="kind"):
        ForbidConstraint("robots", "panda")


def test_human_readable_previews_long_lists():
    state = TaskState(attributes={"objects": [f"o{i}" for i in range(9)]})
    text = state.to_human_readable()
    assert "objects: [o0, o1, o2, o3, o4, o5, +3 more]" in text
    assert str(state) == text == repr(state)


def test_rule_renderer_and_request_defaults():
    assert RuleRenderer().rules(TaskState()) == []

    class Bare(BaseRequest):
        pass

    request = Bare()
    assert request.get_request_type() == "Bare"
    assert request.sampling_weight(TaskState()) == 1.0
    assert request.force_state_recompute() is False
    state = TaskState()
    assert request.apply_request(state, {}) is state
    assert request.perfect_trace(state, {}) is None
    with pytest.raises(NotImplementedError):
        request.sample_parameters(state, None)
    with pytest.raises(NotImplementedError):
        request.create_stages(state, {})
