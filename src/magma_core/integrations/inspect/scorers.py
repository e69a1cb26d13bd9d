"""MAGMA's verdicts as Inspect scorers, and pass^k as an Inspect epoch reducer.

Each scorer reads the episode summary the solver keeps in the sample's store (under
:data:`STORE_KEY`) and returns a :class:`Score` whose fields :mod:`.mapping` computes:

- ``magma_verdict``: 1.0 when the episode's verdict (the report's taxonomy) is ``success``;
  the verdict is the answer, the engine's reason the explanation, and every stage's result
  (verdict, budget score, tool calls) is in the metadata, so Inspect's viewer shows them;
- ``magma_stages``: the share of stages passed;
- ``magma_budget``: the share of stages finished within their target tool calls.

``pass_hat(k)`` reduces a sample's epochs to τ²-bench's pass^k; its mean over samples is the
pass^k ``magma bench report`` prints for the same trials.
"""

from __future__ import annotations

from inspect_ai.scorer import (
    Score,
    Scorer,
    ScoreReducer,
    Target,
    accuracy,
    mean,
    score_reducer,
    scorer,
    stderr,
    value_to_float,
)
from inspect_ai.solver import TaskState

from magma_core.integrations.inspect.mapping import (
    budget_score,
    pass_hat,
    stages_score,
    verdict_score,
)

#: Where the solver keeps the episode's summary in the sample's store.
STORE_KEY = "magma"
NO_EPISODE = "no_episode"


def _unplayed() -> Score:
    return Score(value=0.0, answer=NO_EPISODE, explanation="the sample ended before MAGMA played its episode")


@scorer(metrics=[accuracy(), stderr()])
def magma_verdict() -> Scorer:
    """1.0 when MAGMA's verdict is ``success`` (stage results in the metadata)."""

    async def score(state: TaskState, target: Target) -> Score:
        summary = state.store.get(STORE_KEY)
        return _unplayed() if summary is None else Score(**verdict_score(summary))

    return score


@scorer(metrics=[mean(), stderr()])
def magma_stages() -> Scorer:
    """The share of the episode's stages that passed their verification."""

    async def score(state: TaskState, target: Target) -> Score:
        summary = state.store.get(STORE_KEY)
        return _unplayed() if summary is None else Score(**stages_score(summary))

    return score


@scorer(metrics=[mean(), stderr()])
def magma_budget() -> Scorer:
    """The share of the episode's stages finished within their target tool calls."""

    async def score(state: TaskState, target: Target) -> Score:
        summary = state.store.get(STORE_KEY)
        return _unplayed() if summary is None else Score(**budget_score(summary))

    return score


@score_reducer(name="pass_hat")
def pass_hat_reducer(k: int) -> ScoreReducer:
    """τ²-bench's pass^k of a sample's epochs (a value of 1.0 passed); NaN under k epochs."""
    to_float = value_to_float()

    def reduce(scores: list[Score]) -> Score:
        values = [to_float(s.value) for s in scores]
        return Score(value=pass_hat(values, k), answer=f"{sum(v >= 1.0 for v in values)}/{len(values)} passed")

    return reduce
