"""The engine's typed seams: what it needs from a simulator and from motion."""

from __future__ import annotations

import inspect

from magma_core.simulation.executor import MotionDriver, Simulator
from magma_core.simulation.executor.slots import EngineContext

from .fakes import FakeMotion, FakeSim


def test_the_stand_in_is_a_simulator_and_its_motion_a_motion_driver():
    sim = FakeSim(2)
    assert isinstance(sim, Simulator)
    assert callable(FakeMotion(sim).run)
    hints = inspect.get_annotations(EngineContext, eval_str=True)
    assert hints["sim"] is Simulator and hints["motion"] is MotionDriver


def test_an_object_missing_a_simulator_member_is_not_one():
    class NoSnapshots:
        num_slots = 1
        robot_names = ["panda"]

        def robots(self, slot=0): ...
        def reset(self, seed=None, slots=None): ...
        def observe(self): ...
        def get_state(self): ...
        def set_state(self, state, slots=None): ...
        def close(self): ...

    assert not isinstance(NoSnapshots(), Simulator)
