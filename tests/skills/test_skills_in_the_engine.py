"""Skills through the real engine and simulator: the presets' perfect traces, the conflict
messages, suspend/resume/cancel, the rollback after a failed resume, and skill state."""

from __future__ import annotations

import pytest

import magma_scenarios.sorting.env  # noqa: F401  (registers the sorting worlds)
from magma_core.simulation.data_structures import Decision, ToolCall
from magma_core.simulation.executor import Executor
from magma_scenarios.common.stages import ObjectsToZones
from magma_scenarios.sorting import skill_presets
from magma_scenarios.sorting.skills import ClearZone, SortAll

SKILLS = [SortAll, ClearZone]
PRESETS = ["SkillSortAll", "SkillQuestion", "SkillNewTarget", "SkillStop", "SkillTwoArms"]


def _calls(*calls):
    return Decision(tool_calls=[ToolCall(name, args, robot) for robot, name, args in calls])


SORT = ("panda", "sort_all", {"color": "all", "area": "zone_c"})
CANCEL = ("panda", "cancel_current_action", {})


@pytest.mark.parametrize("name", PRESETS)
def test_every_skill_preset_trace_is_optimal(name):
    task = getattr(skill_presets, name)()
    with Executor(task, skills=SKILLS, backend="cpu") as ex:
        for decision in task.perfect_trace().decisions():
            ex.submit({0: decision})
        record = ex.record(0)
    assert record.status == "success", record.reason
    assert [s.state for s in record.stages] == ["OPTIMAL"] * len(record.stages)


@pytest.fixture(scope="module")
def question():
    with Executor(skill_presets.SkillQuestion(), skills=SKILLS, backend="cpu") as ex:
        yield ex


def _interrupted(ex):
    ex.reset()
    out = ex.submit({0: _calls(SORT)})[0]
    assert out.next_view.stage_index == 1 and out.next_view.kind == "user"
    return out


def test_suspend_shows_the_new_input_and_the_running_status(question):
    out = _interrupted(question)
    assert [c.tool for c in out.calls] == ["detect_objects", "pick", "place"]
    assert "is suspended: a new instruction arrived" in out.message
    assert out.next_view.attributes["robot_statuses"] == {
        "panda": "RUNNING sort_all(color=all, area=zone_c)"
    }
    assert list(question.skill_state(0).suspended) == ["panda"]


def test_conflicts_with_suspended_work(question):
    _interrupted(question)
    out = question.submit({0: _calls(("panda", "pick", {"object": "green_cube"}))})[0]
    assert out.calls[0].message == (
        "Impossible to launch pick because another action is suspended on this robot. "
        "Use panda.cancel_current_action() first."
    )
    out = question.submit({0: _calls(CANCEL, ("panda", "pick", {"object": "green_cube"}))})[0]
    assert {c.message for c in out.calls} == {
        "Submit cancel_current_action separately from new actions."
    }
    assert list(question.skill_state(0).suspended) == ["panda"]  # nothing applied


def test_a_message_resumes_the_suspended_work(question):
    _interrupted(question)
    out = question.submit({0: Decision(say="I am sorting the cubes.")})[0]
    assert [c.tool for c in out.calls] == ["detect_objects", "pick", "place"] * 2
    assert out.next_view.stage_index == 2 and out.next_view.attributes["robot_statuses"] == {
        "panda": "FREE"
    }


def test_cancel_then_nothing_is_running(question):
    _interrupted(question)
    out = question.submit({0: _calls(CANCEL)})[0]
    assert out.calls[0].message == "sort_all(color=all, area=zone_c) was cancelled."
    assert out.tool_calls == 0 and question.skill_state(0).to_dict() == {
        "running": {}, "suspended": {}
    }
    out = question.submit({0: _calls(CANCEL)})[0]
    assert out.calls[0].message == "No action is currently running on this robot."


def test_skill_state_is_a_deep_copy_that_can_be_put_back(question):
    _interrupted(question)
    saved = question.skill_state(0)
    question.submit({0: _calls(CANCEL)})
    assert saved.suspended["panda"].skill.moved == ["red_cube"]
    question.set_skill_state(0, saved)
    assert question.agent_view(0).attributes["robot_statuses"]["panda"].startswith("RUNNING")
    out = question.submit({0: Decision()})[0]  # the put-back work resumes
    assert [c.tool for c in out.calls] == ["detect_objects", "pick", "place"] * 2


def test_two_arms_running_conflicts():
    task = skill_presets.SkillTwoArms()
    decisions = task.perfect_trace().decisions()
    with Executor(task, skills=SKILLS, backend="cpu") as ex:
        ex.submit({0: decisions[0]})
        out = ex.submit({0: decisions[1]})[0]  # panda-1 picks; panda-0's sort resumed beside it
        assert {c.robot for c in out.calls} == {"panda-0", "panda-1"}
        statuses = out.next_view.attributes["robot_statuses"]
        assert statuses == {"panda-0": "RUNNING sort_all(color=red, blue, area=zone_a)",
                            "panda-1": "FREE"}
        out = ex.submit({0: _calls(("panda-0", "pick", {"object": "blue_cube"}))})[0]
        assert out.calls[0].message == (
            "Impossible to launch pick on robot panda-0 because sort_all is already running "
            "on it. You must use panda-0.cancel_current_action() first."
        )
        out = ex.submit({0: _calls(("panda-0", "cancel_current_action", {}),
                                   ("panda-0", "detect_objects", {}))})[0]
        assert "Cannot cancel and start an action on the same robot in one answer." in {
            c.message for c in out.calls
        }
        out = ex.submit({0: _calls(("panda-1", "cancel_current_action", {}))})[0]
        assert out.calls[0].message == "No action is currently running on this robot."


class _RejectsAnyMove(ObjectsToZones):
    """A stage that fails as soon as it is verified (a user who forbade any move)."""

    def verify_completion(self, obs, stage_logs, all_logs):
        return [-1]


class _FailingResume(skill_presets._SkillSorting):
    stages = [
        skill_presets._first_cube_stage(),
        _RejectsAnyMove({"green_cube": "zone_c"}, "Please do not move anything else."),
    ]


def test_a_failed_resume_puts_the_suspended_work_back():
    with Executor(_FailingResume(), skills=SKILLS, backend="cpu") as ex:
        ex.submit({0: _calls(SORT)})
        assert list(ex.skill_state(0).suspended) == ["panda"]
        out = ex.submit({0: Decision()})[0]  # resume: the stage fails
        assert out.status == "failed"
        state = ex.skill_state(0)
        assert list(state.suspended) == ["panda"] and not state.running
        assert state.suspended["panda"].pending.tool_name == "detect_objects"


@pytest.mark.parametrize("name", ["SortAll", "Interruption"])
def test_plain_presets_solve_the_same_with_one_call_skills(name):
    from magma_scenarios.sorting import presets

    task = getattr(presets, name)()
    with Executor(task, skills=[], backend="cpu") as ex:
        for decision in task.perfect_trace().decisions():
            ex.submit({0: decision})
        record = ex.record(0)
    assert record.status == "success", record.reason
    assert [s.state for s in record.stages] == ["OPTIMAL"] * len(record.stages)


def test_unknown_skill_name_is_one_line_and_exit_2(tmp_path, capsys):
    from magma_core.cli import main

    assert main(["run", "sorting.SortAll", "--skills", "nope", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["magma: error: scenario 'sorting' has no skill 'nope' (skills: clear_zone, sort_all)"]


def test_a_broken_skill_ends_only_its_slot():
    from magma_core.simulation.skills import BaseSkill, SkillSpec

    class Broken(BaseSkill):
        spec = SkillSpec("broken", "Raises when it starts.", ["pick"], {})

        def start(self):
            raise RuntimeError("scenario bug")

        def tick(self, status):
            raise RuntimeError("scenario bug")

    task = skill_presets.SkillSortAll()
    with Executor(task, num_slots=2, skills=[Broken, SortAll], backend="cpu") as ex:
        outs = ex.submit({0: _calls(("panda", "broken", {})), 1: _calls(SORT)})
        assert outs[0].status == "error" and "scenario bug" in ex.record(0).reason
        assert outs[1].next_view.stage_index == 1  # slot 1 sorted all three cubes


def test_a_slot_snapshot_carries_the_suspended_work():
    task = skill_presets.SkillQuestion()
    with Executor(task, num_slots=2, skills=SKILLS, backend="cpu") as ex:
        ex.submit({0: _calls(SORT)})
        snapshot = ex.snapshot(0)
        ex.submit({0: _calls(CANCEL)})  # slot 0 goes another way
        blob = ex.snapshot_to_bytes(snapshot)
        ex.restore(0, snapshot)
        ex.restore(1, ex.snapshot_from_bytes(blob))  # through the store's serialisation
        for slot in (0, 1):
            assert ex.skill_state(slot).to_dict()["suspended"] == {
                "panda": "sort_all(color=all, area=zone_c)"
            }
        outs = ex.submit({0: Decision(), 1: Decision()})  # both resume the same work
        for slot in (0, 1):
            assert [c.tool for c in outs[slot].calls] == ["detect_objects", "pick", "place"] * 2
            assert outs[slot].next_view.stage_index == 2
            assert [s.state for s in ex.record(slot).stages[:2]] == ["OPTIMAL", "OPTIMAL"]
