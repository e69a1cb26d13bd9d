"""``magma_suite``: a compiled MAGMA suite as an Inspect task (the file ``inspect eval`` runs).

::

    inspect eval "$(python -m magma_core.integrations.inspect)" -T suite=suites/smoke \\
        -T epochs=2 --model openai-api/local/MODEL        # LOCAL_BASE_URL, LOCAL_API_KEY

Samples are the suite's items (:func:`~.mapping.sample_fields`), the solver plays each
sample's trial through MAGMA's engine with Inspect's model as the agent
(:func:`~.solver.magma_agent`), the scorers are MAGMA's verdicts (:mod:`.scorers`), and the
epochs are ``magma bench run``'s trials, reduced by their mean and by pass^k for k = 1..epochs.
Replies are capped at the ``openai:`` agent's default ``max_tokens`` (1024) unless Inspect's
``--max-tokens`` says otherwise.
"""

from __future__ import annotations

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig

from magma_core.agents.chat_options import DEFAULT_MAX_TOKENS
from magma_core.integrations.inspect.episodes import SuiteEpisodes
from magma_core.integrations.inspect.scorers import (
    magma_budget,
    magma_stages,
    magma_verdict,
    pass_hat_reducer,
)
from magma_core.integrations.inspect.solver import magma_agent
from magma_core.runs import LoopLimits


@task
def magma_suite(suite: str, epochs: int = 1, seed: int = 0, slots: int = 2, out: str | None = None,
                judge: str | None = None, backend: str = "auto", max_decisions: int = 60) -> Task:
    """The suite compiled in folder ``suite`` (``magma bench compile``), each item ``epochs``
    times (trial ``k`` from seed ``seed + k``), ``slots`` trials side by side per engine;
    ``out``: also keep MAGMA's run store there; ``judge``, ``backend``, ``max_decisions``: as
    ``magma bench run``'s."""
    episodes = SuiteEpisodes(suite, seed=seed, slots=slots, out=out, judge=judge, backend=backend,
                             limits=LoopLimits(max_decisions=max_decisions))
    samples = [Sample(**fields) for fields in episodes.samples()]
    return Task(
        dataset=MemoryDataset(samples, name=episodes.suite.name),
        solver=magma_agent(episodes),
        scorer=[magma_verdict(), magma_stages(), magma_budget()],
        epochs=Epochs(epochs, ["mean", *(pass_hat_reducer(k) for k in range(1, epochs + 1))]),
        config=GenerateConfig(max_tokens=DEFAULT_MAX_TOKENS),  # the openai: agent's default cap
        display_name=f"magma {episodes.suite.name}",
        metadata={"magma_suite": episodes.suite.name, "fingerprint": episodes.suite.fingerprint,
                  "seed": seed, "slots": slots},
    )
