"""The skill contract (layer 2) and the skill API the engine builds from it: no simulator."""

from __future__ import annotations

import pytest

from magma_core.simulation.data_structures import ToolErrorFlag
from magma_core.simulation.executor.normalize import NormalizedCall
from magma_core.simulation.executor.skill_admission import admit
from magma_core.simulation.executor.skill_state import SkillAPI, SkillSlotState
from magma_core.simulation.skills import (
    BaseSkill,
    CallTick,
    MessTick,
    MonoToolSkill,
    RobotToolStatus,
    SkillSpec,
    build_mono_tool_skill_class,
)
from magma_scenarios.sorting.skills import SortAll
from magma_scenarios.sorting.tools import SortingTools

TOOLS = SortingTools.get_api_description()


def test_a_skill_must_define_its_own_spec():
    with pytest.raises(TypeError, match="own `spec"):
        class NoSpec(BaseSkill):
            def start(self):
                return MessTick("x")

            def tick(self, status):
                return MessTick("x")

    with pytest.raises(TypeError, match="own `spec"):
        class Inherits(SortAll):  # a parent's spec is not its own
            pass


def test_mono_tool_skill_is_one_call():
    cls = build_mono_tool_skill_class(TOOLS[0])
    assert cls.__name__ == "pickMonoToolSkill" and issubclass(cls, MonoToolSkill)
    assert cls.spec.to_dict() == TOOLS[0]
    skill = cls({"object": "red_cube"})
    assert skill.start() == CallTick("pick", {"object": "red_cube"})
    status = RobotToolStatus("pick", False, "slipped", ToolErrorFlag.INJECTION_ERROR)
    assert skill.tick(status) == MessTick("slipped", False, ToolErrorFlag.INJECTION_ERROR)


def test_sort_all_re_detects_between_moves():
    skill = SortAll({"color": "red, blue", "area": "zone_a"})
    assert skill.start() == CallTick("detect_objects", {})
    seen = "Visible objects: red_cube (on the table), green_cube (on the table), blue_cube (zone_b)."
    assert skill.tick(RobotToolStatus("detect_objects", True, seen)) == CallTick("pick", {"object": "red_cube"})
    assert skill.tick(RobotToolStatus("pick", True, "ok")) == CallTick("place", {"area": "zone_a"})
    assert skill.tick(RobotToolStatus("place", True, "ok")) == CallTick("detect_objects", {})
    seen = "Visible objects: red_cube (zone_a), green_cube (on the table), blue_cube (zone_b)."
    assert skill.tick(RobotToolStatus("detect_objects", True, seen)) == CallTick("pick", {"object": "blue_cube"})
    assert skill.tick(RobotToolStatus("pick", False, "slipped")).result is False


def test_skill_api_rules():
    api = SkillAPI(TOOLS, [SortAll])
    assert list(api.classes)[:2] == ["cancel_current_action", "sort_all"]
    assert {"pick", "place", "detect_objects", "add_area"} <= set(api.classes)

    class Clash(BaseSkill):
        spec = SkillSpec("pick", "x", [], {})

        def start(self):
            return MessTick("x")

        def tick(self, status):
            return MessTick("x")

    class NeedsTool(Clash):
        spec = SkillSpec("fly", "x", ["wings"], {})

    class Reserved(Clash):
        spec = SkillSpec("cancel_current_action", "x", [], {})

    for bad, match in ((Clash, "name of a tool"), (NeedsTool, "wings"), (Reserved, "reserved")):
        with pytest.raises(ValueError, match=match):
            SkillAPI(TOOLS, [bad])
    with pytest.raises(ValueError, match="two skills"):
        SkillAPI(TOOLS, [SortAll, SortAll])


def _call(name, robot, **arguments):
    return NormalizedCall(name, arguments, robot)


def test_admission_messages_without_a_simulator():
    api = SkillAPI(TOOLS, [SortAll])
    robots = ["a", "b"]
    state = SkillSlotState()
    out = admit(api, state, [_call("cancel_current_action", "a")], robots)
    assert [c.message for c in out.refused] == ["No action is currently running on this robot."]
    out = admit(api, state, [_call("fly", "a")], robots)
    assert out.refused[0].message == "fly is not a known tool."
    out = admit(api, state, [_call("sort_all", "a", color="red")], robots)
    assert "Missing argument(s) ['area']" in out.refused[0].message
    out = admit(api, state, [_call("pick", "a", object="x"), _call("pick", "a", object="y")], robots)
    assert out.refused[0].message == (
        "Impossible to launch pick on robot a because pick is already running on it. "
        "You must use a.cancel_current_action() first."
    )


def test_the_guides_example_skill_works():
    import importlib.util
    from pathlib import Path

    # The skills guide shows this file's code (a snippet include), so this is the guide's skill.
    path = Path(__file__).resolve().parents[2] / "examples" / "skills" / "pick_twice.py"
    spec = importlib.util.spec_from_file_location("pick_twice_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    skill = module.PickTwice({"object": "cube"})
    assert skill.start() == CallTick("pick", {"object": "cube"})
    assert skill.tick(RobotToolStatus("pick", False, "slipped")) == CallTick("pick", {"object": "cube"})
    assert skill.tick(RobotToolStatus("pick", False, "slipped again")).message == "slipped again"
