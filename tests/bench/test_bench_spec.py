"""``BenchSpec`` composes a ``RunSpec`` part: the keyword form and the composed form agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from magma_core.bench.runner import BenchSpec
from magma_core.runs import LoopLimits, RunSpec, UserError


def test_the_keyword_form_builds_the_run_part():
    spec = BenchSpec("suite", trials=2, agent="noisy-trace:0.2", slots=3, workers=2, seed=4,
                     out="o", name="b", limits=LoopLimits(max_decisions=9))
    assert spec.run.agent == spec.agent == "noisy-trace:0.2"
    assert (spec.slots, spec.workers, spec.seed, spec.out, spec.name) == (3, 2, 4, Path("o"), "b")
    assert spec.run.limits.max_decisions == 9 and spec.suite == Path("suite")
    composed = BenchSpec("suite", trials=2, run=RunSpec("x", agent="noisy-trace:0.2", slots=3,
                                                        workers=2, seed=4, out="o", name="b"))
    assert composed.config() == spec.config()


def test_bad_values_are_user_errors_and_unknown_fields_type_errors():
    for fields in ({"trials": 0}, {"slots": 0}, {"workers": 0}, {"seed": -1}, {"name": "a b"}):
        with pytest.raises(UserError):
            BenchSpec("suite", **fields)
    with pytest.raises(TypeError, match="episodes"):
        BenchSpec("suite", episodes=3)
    with pytest.raises(AttributeError):
        BenchSpec("suite").nothing  # noqa: B018
