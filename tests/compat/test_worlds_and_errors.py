"""World options (construction vs reset), the predecessor's env builders and multi-robot
base, and the error templates."""

from __future__ import annotations

import pytest
import torch

from magma_core.simulation.data_structures import Observation, ToolExecution, ToolResult
from magma_scenarios.templates.errors import (
    MaskedObjectError,
    OneShotToolFailureError,
    RequestedObjectGraspFailureError,
)


# -- error templates (no simulator) ------------------------------------------------------------
def _execution(obj: str = "cube", name: str = "pick") -> ToolExecution:
    execution = ToolExecution(["OK"], lambda raw: ToolResult(ok=True), context={"object": obj})
    execution.function_name = name
    return execution


def _obs() -> Observation:
    return Observation("panda", {}, {"extra": {}})


def test_one_shot_failure_fails_at_most_failure_count_times() -> None:
    error = OneShotToolFailureError(failure_probability=1.0, failure_count=2)
    args = error.initialize(_obs(), 0)
    results = []
    for _ in range(4):
        execution = _execution()
        results.append(bool(error.apply_pre_exec(execution, args)) and execution.has_error())
    assert results == [True, True, False, False]
    never = OneShotToolFailureError(failure_probability=0.0, failure_count=5)
    assert not never.apply_pre_exec(_execution(), never.initialize(_obs(), 0))
    with pytest.raises(ValueError):
        OneShotToolFailureError(failure_probability=1.5)


def test_one_shot_failure_draws_are_reproducible() -> None:
    error = OneShotToolFailureError(failure_probability=0.5, failure_count=10)

    def pattern() -> list[bool]:
        args = error.initialize(_obs(), 3)
        return [bool(error.apply_pre_exec(_execution(), args)) for _ in range(12)]

    first = pattern()
    assert first == pattern() and any(first) and not all(first)


def test_requested_object_grasp_failure_binds_the_first_grasped_object() -> None:
    error = RequestedObjectGraspFailureError(failure_count=1)
    args = error.initialize(_obs(), 0)
    assert args is None  # bound lazily
    args = {}
    first = _execution("red_cube")
    assert error.apply_pre_exec(first, args) and first.has_error()
    assert "red_cube" in first.reason
    assert not error.apply_pre_exec(_execution("blue_cube"), args)  # another object works
    assert not error.apply_pre_exec(_execution("red_cube"), args)  # failure_count used up
    named = RequestedObjectGraspFailureError(["blue_cube"], failure_count=2)
    named_args = named.initialize(_obs(), 0)
    assert not named.apply_pre_exec(_execution("red_cube"), named_args)
    assert named.apply_pre_exec(_execution("blue_cube"), named_args)


def test_masked_object_is_neither_acted_on_nor_detected() -> None:
    error = MaskedObjectError(["green_cube"])
    args = error.initialize(_obs(), 0)
    execution = _execution("green_cube")
    assert error.apply_pre_exec(execution, args) and execution.has_error()
    assert execution.reason == "green_cube was not detected." and execution.reason_is_public
    assert not error.apply_pre_exec(_execution("red_cube"), args)
    result = ToolResult(ok=True, reason="Visible objects: red_cube (zone_a), green_cube (on the table).")
    assert error.apply_post_verif(result, args)
    assert result.reason == "Visible objects: red_cube (zone_a)." and result.ok


def test_error_templates_in_the_engine_are_injected_and_forgiven() -> None:
    from engine.fakes import FakeMotion, FakeSim
    from engine.helpers import act
    from engine.scenario import CubeTools, PlaceCubeStage, make_task
    from magma_core.simulation.data_structures import ToolErrorFlag, ToolErrorSupport
    from magma_core.simulation.executor import Executor
    from magma_core.simulation.tools import register_tool

    class Tools(CubeTools):
        @register_tool(description="Pick.", params_spec={"object": {"description": "o", "type": str}},
                       errors=[ToolErrorSupport(OneShotToolFailureError, post=False)])
        def pick(self, obs, env_id, params):
            return CubeTools.pick(self, obs, env_id, params)

        @register_tool(description="Place.", params_spec={"area": {"description": "a", "type": str}})
        def place(self, obs, env_id, params):
            return CubeTools.place(self, obs, env_id, params)

    task = make_task([PlaceCubeStage(errors=[OneShotToolFailureError(1.0, 1)])])
    task.Tools_cls = Tools
    sim = FakeSim(1)
    executor = Executor(task, 1, sim=sim, motion=FakeMotion(sim))
    out = executor.submit({0: act("pick", object="cube")})[0]
    call = out.calls[0]
    assert call.failure_flag is ToolErrorFlag.INJECTION_ERROR and call.forgiven
    assert executor.submit({0: act("pick", object="cube")})[0].calls[0].ok
    done = executor.submit({0: act("place", area="zone_a")})[0]
    assert done.status == "success" and done.stage_state.name == "OPTIMAL"


# -- worlds (real simulator) ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def compat_worlds():
    import sapien
    from mani_skill.utils.registration import REGISTERED_ENVS, register_env
    from mani_skill.utils.structs.pose import Pose

    from magma_core.simulation.envs import DefaultEnv, DefaultMultiAgentEnv

    if "CompatOptions-v1" not in REGISTERED_ENVS:

        @register_env("CompatOptions-v1", max_episode_steps=None)
        class CompatOptions(DefaultEnv):
            def __init__(self, *args, box_size: float = 0.2, **kwargs):
                self.box_size = box_size
                super().__init__(*args, **kwargs)

            def _load_scene(self, options):
                super()._load_scene(options)
                self.zone = self.build_a_zone(width=0.1, length=0.3, name="zone")
                self.box = self.create_box(size=self.box_size, height=0.05, name="box",
                                           add_bottom_wall=True,
                                           initial_pose=sapien.Pose([0.1, 0.1, 0]))
                self.observe_pose("box", self.box)
                self.observe_pose("zone", self.zone)

            def _initialize_episode(self, env_idx, options):
                super()._initialize_episode(env_idx, options)
                xyz = torch.zeros((len(env_idx), 3))
                xyz[:, 0] = float(options.get("zone_x", 0.0))  # a reset option
                self.zone.set_pose(Pose.create_from_pq(xyz))

        @register_env("CompatDuo-v1", max_episode_steps=None)
        class CompatDuo(DefaultMultiAgentEnv):
            pass


@pytest.mark.sim
def test_env_options_split_into_construction_and_reset_options(compat_worlds) -> None:
    from magma_core.simulation.envs import SimBatch

    with SimBatch("CompatOptions-v1", 2, seed=0, backend="cpu",
                  env_options={"box_size": 0.3, "zone_x": 0.07},
                  reset_options={"note": "kept"}) as sim:
        assert sim.reset_options == {"zone_x": 0.07, "note": "kept"}
        assert sim.envs[0].box_size == 0.3  # construction option reached __init__
        extra = sim.observe()["extra"]
        assert torch.allclose(extra["zone"][:, 0], torch.tensor([0.07, 0.07]))
        sim.reset(seed=5, slots=[1])  # every reset gets the options again
        assert float(sim.observe()["extra"]["zone"][1, 0]) == pytest.approx(0.07)
        state = sim.get_state()
        assert {"zone", "box"} <= set(state["actors"])


@pytest.mark.sim
def test_default_multi_agent_env_names_two_robots(compat_worlds) -> None:
    from magma_core.simulation.envs import SimBatch

    with SimBatch("CompatDuo-v1", 1, seed=0, backend="cpu") as sim:
        assert sim.robot_names == ["panda-0", "panda-1"]
        assert {"tcp_0", "tcp_1"} <= set(sim.observe()["extra"])
