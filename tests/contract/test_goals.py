"""Goals: scores per env from obs["extra"], combinations, serialisation."""

from __future__ import annotations

import json

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from contract.scenario_examples import make_obs
from magma_core.simulation.goals import And, At, BaseGoal, CountAt, NotAt, Or


class Fixed(BaseGoal):
    """Returns fixed scores (a test double)."""

    def __init__(self, scores: list[int]) -> None:
        self.scores = scores

    def verify(self, obs: dict) -> torch.Tensor:
        return torch.tensor(self.scores)


OBS = make_obs(
    cube=[(0.0, 0.0), (0.5, 0.5), (0.09, 0.0)],
    ball=[(0.0, 0.05), (0.0, 0.0), (1.0, 1.0)],
    goal=[(0.0, 0.0), (0.0, 0.0), (0.0, 0.0)],
    bin=[(0.5, 0.5), (0.5, 0.5), (0.5, 0.5)],
)


def test_at() -> None:
    assert At("cube", "goal").verify(OBS).tolist() == [1, 0, 1]
    assert At("cube", "goal", thresh=0.05).verify(OBS).tolist() == [1, 0, 0]


def test_at_ignores_height_and_accepts_pose_dicts() -> None:
    obs = make_obs(cube=[(0.0, 0.0)], goal=[(0.0, 0.0)])
    obs["extra"]["cube"][:, 2] = 5.0
    obs["extra"]["goal"] = {"pose": obs["extra"]["goal"], "size": torch.ones(1)}
    assert At("cube", "goal").verify(obs).tolist() == [1]


def test_goal_output_is_one_int_per_env() -> None:
    score = At("cube", "goal").verify(OBS)
    assert score.shape == (3,) and not score.dtype.is_floating_point


def test_missing_or_malformed_entries() -> None:
    with pytest.raises(KeyError, match="ghost"):
        At("ghost", "goal").verify(OBS)
    with pytest.raises(KeyError):
        At("cube", "goal").verify({})
    with pytest.raises(ValueError):
        At("cube", "goal").verify({"extra": {"cube": torch.zeros(7), "goal": torch.zeros(1, 7)}})


def test_not_at() -> None:
    assert NotAt("cube", "bin").verify(OBS).tolist() == [1, -1, 1]
    assert NotAt("cube", "bin", strict=False).verify(OBS).tolist() == [1, 0, 1]
    assert NotAt("cube", ["bin", "goal"]).verify(OBS).tolist() == [-1, -1, -1]


def test_count_at() -> None:
    assert CountAt(["cube", "ball"], "goal", 2).verify(OBS).tolist() == [1, 0, 0]
    assert CountAt(["cube", "ball"], "goal", 1).verify(OBS).tolist() == [1, 1, 1]
    assert CountAt(["cube", "ball"], "goal", 0).verify(OBS).tolist() == [1, 1, 1]


@pytest.mark.parametrize(
    "build",
    [
        lambda: At("", "goal"),
        lambda: At("cube", "goal", thresh=0),
        lambda: At("cube", "goal", thresh=True),
        lambda: NotAt("cube", []),
        lambda: CountAt("cube", "goal", 1),
        lambda: CountAt(["cube"], "goal", -1),
        lambda: CountAt(["cube"], "goal", 1.5),
        lambda: And([]),
        lambda: Or(["not a goal"]),
    ],
)
def test_bad_goal_arguments(build) -> None:
    with pytest.raises((TypeError, ValueError)):
        build()


def test_and_is_the_minimum_and_or_the_rule() -> None:
    a, b = Fixed([1, 1, 0, -1, 0]), Fixed([1, 0, 0, 1, -1])
    assert And([a, b]).verify({}).tolist() == [1, 0, 0, -1, -1]
    assert Or([a, b]).verify({}).tolist() == [1, 1, 0, 1, 0]
    assert Or([Fixed([-1]), Fixed([-1])]).verify({}).tolist() == [-1]


@given(st.lists(st.lists(st.sampled_from([-1, 0, 1]), min_size=4, max_size=4), min_size=1, max_size=4))
def test_or_matches_its_definition(rows: list[list[int]]) -> None:
    out = Or([Fixed(r) for r in rows]).verify({}).tolist()
    for env, value in enumerate(out):
        column = [r[env] for r in rows]
        assert value == (1 if 1 in column else 0 if 0 in column else -1)


def test_combinations_reject_bad_sub_goal_output() -> None:
    with pytest.raises(ValueError):
        And([Fixed([1, 2])]).verify({})
    with pytest.raises(ValueError):
        And([Fixed([1, 0]), Fixed([1])]).verify({})


@pytest.mark.parametrize(
    "goal",
    [
        At("cube", "goal", thresh=0.05),
        NotAt("cube", ["bin", "goal"], strict=False),
        CountAt(["cube", "ball"], "goal", 2),
        Or([And([At("cube", "goal"), NotAt("ball", "bin")]), CountAt(["cube"], "bin", 1)]),
    ],
)
def test_goal_round_trip(goal: BaseGoal) -> None:
    spec = json.loads(json.dumps(goal.to_spec()))
    rebuilt = BaseGoal.from_spec(spec)
    assert type(rebuilt) is type(goal) and rebuilt.to_spec() == goal.to_spec()
    assert rebuilt.verify(OBS).tolist() == goal.verify(OBS).tolist()


def test_goal_from_spec_checks_the_class() -> None:
    with pytest.raises(TypeError):
        At.from_spec(NotAt("cube", "bin").to_spec())


def test_a_goal_result_of_the_wrong_dtype_or_shape_is_refused_with_its_name() -> None:
    from magma_core.simulation.data_structures import StageInput, UserInstruction
    from magma_core.simulation.stage import BaseTaskStage

    class Returns(BaseGoal):
        def __init__(self, value) -> None:
            self.value = value

        def verify(self, obs: dict) -> torch.Tensor:
            return self.value

    def stage(value) -> BaseTaskStage:
        class Once(BaseTaskStage):
            target_tool_calls, max_tool_calls = 1, 2

            def _to_spec_arguments(self):
                return {}

        made = Once(goals=[Returns(value)], stage_goal_description="d",
                    stage_input=StageInput(UserInstruction("Do it."), False))
        return made

    for value, words in [(torch.tensor([True, False]), "bool tensor"),
                         (torch.tensor([1.0, 0.0]), "float32 tensor"),
                         (torch.tensor([[1], [0]]), "1-D tensor"),
                         (torch.tensor([1]), "1 scores for 2 envs")]:
        with pytest.raises(ValueError, match="Returns") as info:
            stage(value).verif_env_completion({}, num_envs=2)
        assert words in str(info.value)
        assert "expected an int tensor of length 2 with -1/0/1" in str(info.value)
    scores = stage(torch.tensor([1, 0], dtype=torch.int32)).verif_env_completion({}, num_envs=2)
    assert scores.tolist() == [1, 0]
