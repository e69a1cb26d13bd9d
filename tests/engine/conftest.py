"""Fixtures for the engine tests.

``world`` runs a test twice: on the in-memory stand-in (``fake``) and on the real cube
world (``sim``, marked ``sim``). Both give executors whose motion is wrapped in a
``RecordingMotion`` (runs recorded, planner errors injectable).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch

from engine.fakes import FakeMotion, FakeSim, RecordingMotion
from magma_core.simulation.executor import Executor
from magma_core.simulation.tasks import BaseTask


class ScriptedJudge:
    """A judge that accepts answers containing ``expected`` and records its calls."""

    def __init__(self, expected: str = "zone A") -> None:
        self.expected = expected
        self.calls: list[tuple[str, str, str]] = []

    def judge(self, rule: str, question: str, answer: str) -> Any:
        from magma_core.judge import Verdict

        self.calls.append((rule, question, answer))
        ok = self.expected.lower() in answer.lower()
        return Verdict(ok=ok, reason="names zone A" if ok else "does not name zone A")


@dataclass
class Run:
    """An executor under test and handles on its world."""

    executor: Executor
    sim: Any
    motion: RecordingMotion
    real: bool

    def obs(self) -> dict[str, Any]:
        return self.sim.observe()

    def cube(self, slot: int = 0) -> torch.Tensor:
        """The cube's xyz in ``slot``."""
        return self.sim.observe()["extra"]["cube"][slot, :3].clone()

    def machine_on(self, slot: int = 0) -> bool:
        return bool(self.sim.get_state()["magma_extra_state"]["machine_on"][slot])


_SIMS: dict[int, tuple[Any, Any]] = {}


def _real_world(num_slots: int) -> tuple[Any, Any]:
    """A cube-world ``SimBatch`` and its motion driver, shared across tests by slot count."""
    if num_slots not in _SIMS:
        import magma_scenarios.cube.env  # noqa: F401  (registers MagmaCube-v1)
        from magma_core.simulation.envs import SimBatch
        from magma_core.simulation.executor.motion import SimMotion

        sim = SimBatch("MagmaCube-v1", num_slots, seed=0)
        _SIMS[num_slots] = (sim, SimMotion(sim))
    return _SIMS[num_slots]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for sim, _ in _SIMS.values():
        sim.close()
    _SIMS.clear()


Builder = Callable[..., Run]


def _builder(kind: str) -> Builder:
    def build(task: BaseTask, num_slots: int = 1, **kwargs: Any) -> Run:
        if kind == "fake":
            sim: Any = FakeSim(num_slots)
            inner: Any = FakeMotion(sim)
        else:
            sim, inner = _real_world(num_slots)
        motion = RecordingMotion(inner, sim)
        executor = Executor(task, num_slots, sim=sim, motion=motion, **kwargs)
        return Run(executor, sim, motion, real=kind == "sim")

    return build


@pytest.fixture(params=["fake", pytest.param("sim", marks=pytest.mark.sim)])
def world(request: pytest.FixtureRequest) -> Builder:
    """``world(task, num_slots=1, **executor_kwargs) -> Run``, on both worlds."""
    return _builder(request.param)


@pytest.fixture
def fake() -> Builder:
    """Like ``world``, on the in-memory stand-in only (pure engine logic)."""
    return _builder("fake")


@pytest.fixture
def sim_world() -> Builder:
    """Like ``world``, on the real cube world only."""
    return _builder("sim")


@pytest.fixture(scope="session")
def cube_world() -> None:
    """Registers ``MagmaCube-v1`` (imports the simulator)."""
    import magma_scenarios.cube.env  # noqa: F401


@pytest.fixture
def judge() -> ScriptedJudge:
    return ScriptedJudge()
