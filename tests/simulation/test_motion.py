"""Motion on the real simulator: pick-and-place, planner errors, groups, protection."""

from __future__ import annotations

import pytest
import torch

from magma_core.simulation.data_structures import Pose, ToolErrorFlag, ToolExecution, ToolResult
from magma_core.simulation.motion import MotionPlan, MotionRunner, run_trajectories
from magma_core.simulation.state import restore_disallowed_actors

from .helpers import down_quat, pick_and_place, push

pytestmark = pytest.mark.sim

DOWN = down_quat(0.0)


def placed_on(obs: dict, slot: int, zone: str = "zone_a") -> bool:
    cube, zone_pose = obs["extra"]["cube"][slot], obs["extra"][zone][slot]
    inside = bool((cube[:2] - zone_pose[:2]).abs().max() < 0.05)
    resting = abs(float(cube[2]) - 0.02) < 0.005
    released = float(obs["extra"]["tcp"][slot, 2]) > 0.08
    return inside and resting and released


def test_pick_and_place_succeeds_on_nine_of_ten_seeds(batch1):
    successes = 0
    for seed in range(10):
        obs = batch1.reset(seed=seed)
        plan = MotionPlan(0, pick_and_place(obs["extra"]["cube"][0], obs["extra"]["zone_a"][0]))
        (result,) = run_trajectories(batch1, [plan])
        successes += result.ok and placed_on(batch1.observe(), 0)
    assert successes >= 9


def test_unreachable_pose_is_a_planner_error_without_motion(batch1):
    before = batch1.get_state()
    (result,) = run_trajectories(batch1, [MotionPlan(0, ["CLOSE", Pose((1.5, 0.0, 0.3), DOWN)])])
    assert not result.ok
    assert result.failure_flag is ToolErrorFlag.PLANNER_ERROR
    assert "unreachable" in result.reason
    assert result.steps == 0
    assert torch.equal(
        batch1.get_state()["articulations"]["panda"], before["articulations"]["panda"]
    )


def test_blocked_pose_is_a_planner_error(batch1):
    plan = MotionPlan(0, [Pose((0.0, 0.15, 0.1), DOWN), Pose((0.0, 0.15, -0.08), DOWN)])
    (result,) = run_trajectories(batch1, [plan])
    assert result.failure_flag is ToolErrorFlag.PLANNER_ERROR
    assert "not reached" in result.reason
    assert float(batch1.observe()["extra"]["tcp"][0, 2]) > 0.0  # stopped on the table


def test_ok_only_adds_no_motion(batch1):
    (result,) = run_trajectories(batch1, [MotionPlan(0, ["OK"])])
    assert result.ok and result.steps == 0


def test_tool_execution_round_trip(batch1):
    tool = ToolExecution([Pose((1.5, 0.0, 0.3), DOWN)], verifier=lambda obs: ToolResult(True))
    (result,) = run_trajectories(batch1, [MotionPlan.from_tool(0, tool)])
    result.apply_to(tool)
    assert tool.failure_flag is ToolErrorFlag.PLANNER_ERROR
    assert tool.reason == result.reason


def test_slots_move_together_and_idle_slots_stay(batch3):
    obs = batch3.observe()
    before = batch3.get_state()
    plans = [
        MotionPlan(s, pick_and_place(obs["extra"]["cube"][s], obs["extra"]["zone_b"][s]))
        for s in (0, 2)
    ]
    results = run_trajectories(batch3, plans)
    assert all(r.ok and r.start_step == 0 for r in results)
    after = batch3.observe()
    assert placed_on(after, 0, "zone_b") and placed_on(after, 2, "zone_b")
    state = batch3.get_state()
    assert torch.equal(state["actors"]["cube"][1], before["actors"]["cube"][1])
    assert torch.equal(state["articulations"]["panda"][1], before["articulations"]["panda"][1])


def test_motion_resumes_from_a_restored_grasp(batch1):
    obs = batch1.observe()
    full = pick_and_place(obs["extra"]["cube"][0], obs["extra"]["zone_a"][0])
    (pick,) = run_trajectories(batch1, [MotionPlan(0, full[:5])])  # up to the lift
    assert pick.ok
    held = batch1.save_slot(0)
    run_trajectories(batch1, [MotionPlan(0, ["OPEN", Pose((0.1, -0.1, 0.2), DOWN)])])  # drop it
    batch1.restore_slot(0, held)
    (place,) = run_trajectories(batch1, [MotionPlan(0, full[5:])])
    assert place.ok and placed_on(batch1.observe(), 0)


@pytest.mark.parametrize(("allowed", "stays_pushed"), [([], False), (["cube"], True)])
def test_protection_of_a_pushed_cube(batch3, allowed, stays_pushed):
    source = batch3.get_state()
    cube0 = source["actors"]["cube"][1].clone()
    (result,) = run_trajectories(batch3, [MotionPlan(1, push(cube0))])
    assert result.ok
    state = batch3.get_state()
    assert float(state["actors"]["cube"][1, 1] - cube0[1]) > 0.03  # the push happened
    restore_disallowed_actors(state, source, 1, allowed)
    batch3.set_state(state, slots=[1])
    for _ in range(5):
        batch3.step_physics(batch3.get_state()["articulations"]["panda"][:, 13:21], slots=[1])
    cube = batch3.observe()["extra"]["cube"][1]
    moved = float(cube[1] - cube0[1])
    if stays_pushed:
        assert moved > 0.03
    else:
        assert abs(moved) < 1e-3


@pytest.fixture(scope="module")
def two_arms():
    import magma_scenarios.cube.env  # noqa: F401
    from magma_core.simulation.envs import SimBatch

    batch = SimBatch(
        "MagmaCube-v1", 1, seed=0, backend="cpu", env_options={"robot_uids": ("panda", "panda")}
    )
    yield batch
    batch.close()


def test_execution_groups_delay_later_members(two_arms):
    assert two_arms.robot_names == ["panda-0", "panda-1"]
    assert {"tcp", "tcp_0", "tcp_1"} <= set(two_arms.observe()["extra"])
    runner = MotionRunner(two_arms)
    left = [Pose((0.0, -0.35, 0.25), DOWN), Pose((0.05, -0.3, 0.2), DOWN)]
    right = [Pose((0.0, 0.35, 0.25), DOWN), Pose((0.05, 0.3, 0.2), DOWN)]

    run = runner.run([MotionPlan(0, left, 0, "g"), MotionPlan(0, right, 1, "g")])
    first, second = run.results
    assert run.steps >= second.end_step and run.failures() == {}
    assert first.ok and second.ok
    assert second.start_step >= first.end_step > 0

    a, b = runner.run(
        [MotionPlan(0, list(reversed(left)), 0), MotionPlan(0, list(reversed(right)), 1)]
    ).results
    assert a.ok and b.ok and a.start_step == b.start_step == 0
    tcp = two_arms.observe()["extra"]
    assert float(tcp["tcp_0"][0, 1]) < -0.3 and float(tcp["tcp_1"][0, 1]) > 0.3
