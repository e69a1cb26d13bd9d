"""Shared engines for the rl tests: one cube environment per module that asks for it."""

from __future__ import annotations

import pytest

from magma_core.rl import TaskSource, TrainingEnv


@pytest.fixture(scope="module")
def cube_env(tmp_path_factory):
    out = tmp_path_factory.mktemp("rl")
    source = TaskSource.target("cube.PickPlace", seeds=[0, 1, 2])
    with TrainingEnv(source, slots=4, out=out, name="train", backend="cpu") as env:
        yield env


def trace_messages(rollout, decisions):
    """The scripted policy: the task's reference decisions as assistant messages."""
    return [rollout.message_for(d) for d in decisions]
