"""The ``Engine`` protocol: the executor and the public-vocabulary wrapper both have its shape,
and the wrapper forwards the engine's public attributes but never its private ones."""

from __future__ import annotations

import inspect

import pytest

from engine.fakes import FakeMotion, FakeSim
from engine.scenario import MachineStage, PlaceCubeStage, make_task
from magma_core.simulation.executor import Executor
from magma_core.simulation.executor.engine import Engine
from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor


@pytest.fixture
def executor():
    sim = FakeSim(2)
    with Executor(make_task([MachineStage(), PlaceCubeStage()]), 2, sim=sim,
                  motion=FakeMotion(sim)) as engine:
        yield engine


def test_the_executor_and_the_wrapper_are_engines(executor):
    wrapped = PublicVocabularyExecutor(executor)
    assert isinstance(executor, Engine) and isinstance(wrapped, Engine)
    members = [n for n, _ in inspect.getmembers(Engine) if not n.startswith("_")]
    for name in members:  # the same signatures where the wrapper defines its own
        assert hasattr(wrapped, name) and hasattr(executor, name), name
    assert wrapped.num_slots == 2 and wrapped.task_of(1) is executor.task_of(1)
    assert wrapped.stages_for() == executor.stages_for()


def test_the_wrapper_refuses_private_and_canonical_attributes(executor):
    wrapped = PublicVocabularyExecutor(executor)
    with pytest.raises(AttributeError, match="private"):
        wrapped._slots  # noqa: B018
    with pytest.raises(AttributeError, match="canonical"):
        wrapped.tool_descriptions  # noqa: B018
    assert not isinstance(object(), Engine)
