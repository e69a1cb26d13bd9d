"""Scorers: rule-based checks of text answers beside the judge (contains, exact, regex,
one-of, numeric), per stage in a scenario and per stage of a frozen task spec; a stage with
a scorer needs no judge; an unreadable judge reply is a judge error of that episode."""

from __future__ import annotations

import time

import pytest

from engine.helpers import say
from engine.scenario import AskStage, make_task
from magma_core.bench.task_spec import task_from_spec, task_to_spec
from magma_core.simulation.executor import FAILED, SUCCESS
from magma_core.simulation.executor.task_check import MissingJudgeError, stages_to_run
from magma_core.simulation.stage import ScoredQuestionStage
from magma_core.simulation.stage.scorers import (
    BaseScorer,
    Contains,
    Exact,
    Numeric,
    OneOf,
    Regex,
    scorer_from_config,
)


@pytest.mark.parametrize(("scorer", "good", "bad"), [
    (Contains("zone_a"), "The cube is in Zone_A now.", "The cube is in zone_ab."),
    (Exact("two"), " Two. ", "two cubes"),
    (OneOf(["two", "2"]), "2", "three"),
    (Regex(r"^\d+ cans?$", full=True), "3 cans", "three cans"),
    (Numeric(2.5, tolerance=0.5), "About 3 kg.", "It weighs 4 kg."),
    (Numeric(2), "There are two.", "There are none."),
])
def test_each_scorer_passes_the_right_answer_and_fails_the_wrong_one_with_a_reason(scorer, good, bad):
    assert scorer.score(good).ok, scorer.score(good).reason
    verdict = scorer.score(bad)
    assert not verdict.ok and verdict.reason and verdict.error is None
    assert not scorer.score("   ").ok
    assert BaseScorer.from_spec(scorer.to_spec()) == scorer  # a scorer is data


def test_short_forms_build_the_shipped_scorers_and_bad_ones_are_refused():
    assert scorer_from_config({"one_of": ["two", "2"]}) == OneOf(["two", "2"])
    assert scorer_from_config({"numeric": 2, "tolerance": 0.5}) == Numeric(2, 0.5)
    assert scorer_from_config({"contains": "Pasta", "case_sensitive": True}) == Contains("Pasta", True)
    assert scorer_from_config(Exact("x").to_spec()) == Exact("x")
    for bad in ({}, {"contains": "a", "exact": "b"}, {"nope": 1}, "contains", {"numeric": "two"},
                {"type": "builtins:dict", "arguments": {}}):
        with pytest.raises(ValueError):
            scorer_from_config(bad)


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(\w*)*x", r"(a{1,9})+", r"(.)\1", "x" * 201, "("])
def test_a_regex_that_could_run_forever_or_is_not_one_is_refused(pattern):
    with pytest.raises(ValueError):
        Regex(pattern)


def test_a_bounded_regex_answers_fast_on_a_hostile_answer():
    started = time.perf_counter()
    assert not Regex(r"^(ab|cd)e").score("ab" * 50_000).ok  # only the first 2000 characters
    assert time.perf_counter() - started < 1.0


def test_a_scored_stage_needs_no_judge_and_decides_the_answer(fake):
    stage = ScoredQuestionStage("How many zones are there?", {"one_of": ["two", "2"]})
    task = make_task([stage])
    assert stages_to_run(task, judge=None)  # no MissingJudgeError: the scorer is its judge
    with pytest.raises(MissingJudgeError):
        stages_to_run(make_task([AskStage()]), judge=None)
    executor = fake(task).executor
    out = executor.submit({0: say("Two.")})[0]
    assert out.status == SUCCESS
    record = executor.record(0).to_dict()
    step = record["steps"][0]
    assert step["judge"]["scorer"] == "OneOf(options=['two', '2'], case_sensitive=False)"
    executor.reset_slot(0, 1)
    out = executor.submit({0: say("Three.")})[0]
    assert out.status == FAILED and "none of ['two', '2']" in out.failure_reason


def test_a_scorer_on_a_stage_survives_the_frozen_task_spec_and_can_be_set_per_stage():
    from magma_core.simulation.stage import AskingBaseStage

    asking = AskingBaseStage("Where is the cube?", "zone A")
    task = make_task([asking, ScoredQuestionStage("How many?", Numeric(2))], name="Scored")
    spec = task_to_spec(task)
    assert "scorer" not in spec["stages"][0] and spec["stages"][1]["scorer"] == Numeric(2).to_spec()
    spec["stages"][0]["scorer"] = Contains("zone A").to_spec()  # what a suite item's scorers key does
    rebuilt = task_from_spec(spec)
    assert rebuilt.stages[0].scorer == Contains("zone A") and rebuilt.stages[1].scorer == Numeric(2)
    assert stages_to_run(rebuilt, judge=None)
    plain = task_to_spec(make_task([asking], name="Scored"))
    assert all("scorer" not in entry for entry in plain["stages"])  # unchanged bytes without one


def test_a_scorer_on_an_action_stage_is_refused():
    from engine.scenario import PlaceCubeStage

    stage = PlaceCubeStage()
    stage.scorer = Exact("done")
    with pytest.raises(TypeError, match="needs a text-only stage"):
        stage.validate()


def test_an_unreadable_judge_reply_is_a_judge_error_of_that_episode(fake):
    from magma_core.judge import Verdict

    class GarbledJudge:
        def judge(self, rule, question, answer):
            return Verdict(ok=False, reason="", error="no JSON object in the reply",
                           raw_output="I think so", unparsable=True)

    executor = fake(make_task([AskStage()]), judge=GarbledJudge()).executor
    out = executor.submit({0: say("zone A")})[0]
    assert out.status == "judge_error"
    assert "could not be read as a verdict" in executor.record(0).reason
    assert "I think so" in executor.record(0).reason
