"""``--record-control`` on the real simulator (ManiSkill, physx_cpu): every control step's joint
state and command is stored per decision, the recording changes nothing of the episode, and
without the flag nothing is recorded and the engine runs on the simulator itself."""

from __future__ import annotations

import pytest

from magma_core.runs import RunSpec, run
from magma_core.simulation.data_structures import Decision, ToolCall
from magma_core.simulation.executor import Executor
from magma_core.simulation.executor.control_record import ControlRecorder
from magma_core.store import open_store
from magma_core.store.reader import StoreReader
from magma_core.user_error import UserError

pytestmark = pytest.mark.sim

PRESET = "cube.PickPlace"


def _run(tmp_path, name: str, record: bool, slots: int = 1):
    spec = RunSpec(target=PRESET, agent="trace", episodes=2, slots=slots, out=tmp_path,
                   name=name, record_control=record)
    result = run(spec)
    assert result.ok
    return result


def test_a_recorded_run_stores_every_control_step_of_each_decision(tmp_path):
    _run(tmp_path, "rc", True)
    reader = StoreReader(tmp_path)
    assert reader.get_run("rc")["config"]["record_control"] is True
    for episode in (0, 1):
        record = reader.episode_record("rc", episode)
        control = reader.control("rc", episode)
        # pick and place move the arm; the closing answer moves nothing, so it has no row
        assert [c["decision"] for c in control] == [1, 2]
        assert sum(len(c["steps"]) for c in control) == record["timings"]["sim_steps"] > 40
        block = control[0]
        assert block["rate"] == 20.0 and list(block["joints"]) == ["panda"]
        assert block["joints"]["panda"][:2] == ["panda_joint1", "panda_joint2"]
        steps = [s for c in control for s in c["steps"]]
        for step in steps:
            assert len(step["qpos"]["panda"]) == 9 and len(step["action"]["panda"]) == 8
            assert step["action"]["panda"][-1] in (1.0, -1.0)  # the gripper's open / close
            assert set(step["world"]) >= {"actors", "articulations"}
        # pick opens the gripper first and closes it on the cube: both commands occur
        assert {s["action"]["panda"][-1] for s in control[0]["steps"]} == {1.0, -1.0}
        # the state is read before each step: the first is the arm at rest, the next differ
        assert steps[0]["qpos"] != steps[-1]["qpos"]
        moved = [abs(a - b) for a, b in zip(steps[-1]["qpos"]["panda"], steps[0]["qpos"]["panda"], strict=True)]
        assert max(moved) > 0.05
        # each decision's last recorded state is (within a step) the arm the stored world
        # shows after that decision: the steps are the motion that led there
        states = reader.world("rc", episode)["states"]
        for block in control:
            after = [a["qpos"] for a in states[block["decision"]]["articulations"].values()
                     if len(a["qpos"]) == 9]
            last = block["steps"][-1]["qpos"]["panda"]
            assert len(after) == 1
            assert max(abs(x - y) for x, y in zip(after[0], last, strict=True)) < 0.05


def test_recording_changes_nothing_of_the_episodes_and_off_records_nothing(tmp_path):
    on, off = _run(tmp_path, "on", True), _run(tmp_path, "off", False, slots=2)
    with open_store(tmp_path, create=False) as store:
        for a, b in zip(on.summaries, off.summaries, strict=True):
            ra, rb = store.episode_record("on", a.episode), store.episode_record("off", b.episode)
            assert ra["world_digest"] == rb["world_digest"]  # the same worlds, bit for bit
            assert ra["timings"]["sim_steps"] == rb["timings"]["sim_steps"]
            assert store.episode_control("off", b.episode) == []
        assert "record_control" not in store.get_run("off")["config"]


def test_the_executor_runs_on_the_simulator_itself_unless_asked(tmp_path):
    import magma_scenarios.cube.env  # noqa: F401 - registers the world
    from magma_scenarios.cube.presets import PickPlace

    with Executor(PickPlace(), num_slots=2, seed=3) as plain:
        assert plain.control_recorder is None and not isinstance(plain.sim, ControlRecorder)
    with Executor(PickPlace(), num_slots=2, seed=3, record_control=True) as recorded:
        recorder = recorded.control_recorder
        assert isinstance(recorder, ControlRecorder) and recorder.take(0) == []
        pick = Decision(tool_calls=[ToolCall("pick", {"object": "cube"}, "panda")])
        recorded.submit({1: pick})  # only slot 1 moves: only slot 1 has steps
        assert recorder.take(0) == []
        steps = recorder.take(1)
        assert len(steps) == recorded.record(1).sim_steps > 0
        assert recorder.take(1) == []  # drained
        snapshot = recorded.snapshot(1)
        recorded.restore(1, snapshot)  # the world is put back: the next step says so
        recorded.submit({1: Decision(tool_calls=[ToolCall("place", {"area": "zone_a"}, "panda")])})
        after = recorder.take(1)
        assert after[0].get("restored") is True and not any(s.get("restored") for s in after[1:])
        recorded.reset_slot(1)
        assert recorder.take(1) == []


def test_a_run_is_resumed_recorded_as_it_began(tmp_path):
    run(RunSpec(target=PRESET, agent="trace", episodes=1, out=tmp_path, name="r"))
    with pytest.raises(UserError, match="record_control"):
        run(RunSpec(target=PRESET, agent="trace", episodes=2, out=tmp_path, name="r", record_control=True))
