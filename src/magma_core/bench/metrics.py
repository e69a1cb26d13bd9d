"""The numbers of a benchmark report, from the trials of a benchmark run.

``collect(store, name)`` reads the trials; ``compute(trials, trials_per_item)`` is a pure
function of them (tested against hand-computed values). Every rate is
``{"num", "den", "rate", "low", "high"}`` (95% Wilson interval).

- conditional robustness of a condition: among its trials whose paired clean control trial
  (same item skeleton, same trial index) succeeded, the fraction that succeeded;
- progression: mean fraction of stages passed;
- pass^k (k = 1..K): τ²-bench's unbiased estimator over items;
- mission-update retention by lag: success of trials with a mission update, by its lag;
- by domain: success per domain (the scenario of the item's preset or definition, e.g.
  ``warehouse``), and per domain the success and conditional robustness of each condition;
- per item, per stage and per failure reason: :mod:`magma_core.bench.breakdown`;
- noise: the flip rate of identical trials and the noise floor, :mod:`magma_core.bench.noise`;
- cost: prompt and completion tokens at a model's prices (:class:`~magma_core.bench.prices.Price`),
  or all tokens at one ``price_per_mtok``.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from magma_core.bench.breakdown import breakdown
from magma_core.bench.conditions import CLEAN, CONDITIONS
from magma_core.bench.noise import noise
from magma_core.bench.prices import Price
from magma_core.bench.stats import pass_hat_k, rate
from magma_core.bench.taxonomy import INFRASTRUCTURE_FAILURE, NO_ACTION, TAXONOMY, terminal_status
from magma_core.bench.trial import Trial
from magma_core.json_types import JSONDict
from magma_core.store.bench_store import BenchStore, bench_run_name, trial_of
from magma_core.store.reader import StoreReader
from magma_core.user_error import UserError


def collect(store: BenchStore | StoreReader, name: str) -> tuple[list[Trial], JSONDict]:
    """The stored trials of benchmark run ``name`` and its config; items given up after
    3 infrastructure failures contribute their missing trials as ``infrastructure_failure``."""
    bench = store.get_bench(name)
    if bench is None:
        known = ", ".join(store.list_benches()) or "none"
        raise UserError(f"no benchmark run {name!r} in {store.path} (known: {known})")
    config = bench["config"]
    failures = store.failures(name)
    per_item = config["trials"]
    run = bench_run_name(name)
    stored = {trial_of(s.episode, per_item): s for s in store.episodes(run)}
    split = store.token_split(run)
    trials: list[Trial] = []
    for position, facts in enumerate(config["items"]):
        for k in range(per_item):
            s = stored.get((position, k))
            if s is not None:
                record = store.episode_record(run, s.episode) if s.status == NO_ACTION else None
                prompt, completion = split.get(s.episode, (0, 0))
                trials.append(Trial(facts, k, terminal_status(s.status, record), s.stages_passed,
                                    s.stages_total, s.total_tokens, s.agent_latency_s,
                                    prompt, completion, s.status, s.reason))
            elif failures.get(facts["item_id"], 0) >= 3:
                trials.append(Trial(facts, k, INFRASTRUCTURE_FAILURE, 0, facts["stages"],
                                    reason="lost 3 times to an agent or judge outage"))
    return trials, config


def _rate_of(trials: list[Trial]) -> JSONDict:
    return rate(sum(t.success for t in trials), len(trials))


def _grouped(trials: list[Trial], key: str) -> dict[str, JSONDict]:
    groups: dict[str, list[Trial]] = defaultdict(list)
    for t in trials:
        groups[str(t.item[key])].append(t)
    return {k: _rate_of(v) for k, v in sorted(groups.items())}


def domain(item: JSONDict) -> str:
    """The domain of an item's facts: the scenario id of its preset or definition
    (``warehouse.Swap`` -> ``warehouse``); runs stored before items kept their scenario fall
    back on the skeleton id, which starts with it."""
    name = item.get("scenario") or item.get("skeleton_id") or "?"
    return str(name).split(".", 1)[0]


def _robustness(group: list[Trial], outcome: dict[tuple[str, int], bool]) -> JSONDict:
    """Success among the trials whose paired clean control trial succeeded."""
    return _rate_of([t for t in group if outcome.get((t.item["control"], t.trial))])


def _by_domain(trials: list[Trial], outcome: dict[tuple[str, int], bool]) -> JSONDict:
    """The per-domain entries of :func:`compute`."""
    domains: dict[str, list[Trial]] = defaultdict(list)
    for t in trials:
        domains[domain(t.item)].append(t)
    by_condition: dict[str, JSONDict] = {}
    robustness: dict[str, JSONDict] = {}
    for name, group in sorted(domains.items()):
        conditions = {c: [t for t in group if t.item["condition"] == c] for c in CONDITIONS}
        by_condition[name] = {c: _rate_of(v) for c, v in conditions.items() if v}
        robustness[name] = {c: _robustness(v, outcome) for c, v in conditions.items()
                            if v and c != CLEAN}
    return {"success_by_domain": {k: _rate_of(v) for k, v in sorted(domains.items())},
            "success_by_domain_condition": by_condition,
            "conditional_robustness_by_domain": robustness}


def agent_facts(config: JSONDict) -> JSONDict:
    """The report's ``agent`` entry: the agent spec and the model (name, endpoint, options)
    a benchmark run's stored config names."""
    return {"spec": config.get("agent"), "model": config.get("model")}


def compute(trials: list[Trial], trials_per_item: int, price_per_mtok: float | None = None,
            price: Price | None = None) -> JSONDict:
    """Every metric of the report (see the module docstring) as a JSON-compatible dict;
    ``price`` (the model's prompt/completion prices) wins over ``price_per_mtok``."""
    by_condition = {c: [t for t in trials if t.item["condition"] == c] for c in CONDITIONS}
    by_condition = {c: v for c, v in by_condition.items() if v}
    outcome = {(t.item["item_id"], t.trial): t.success for t in trials}
    robustness = {}
    for condition, group in by_condition.items():
        if condition == CLEAN:
            continue
        robustness[condition] = _robustness(group, outcome)
    per_item: dict[str, list[Trial]] = defaultdict(list)
    for t in trials:
        per_item[t.item["item_id"]].append(t)
    counts = [(len(v), sum(t.success for t in v)) for v in per_item.values()]
    pass_k = {str(k): pass_hat_k(counts, k) for k in range(1, trials_per_item + 1)}
    pass_k_by_condition = {
        c: {str(k): pass_hat_k([(len(v), sum(t.success for t in v)) for i, v in per_item.items()
                                if v[0].item["condition"] == c], k)
            for k in range(1, trials_per_item + 1)}
        for c in by_condition}
    lags: dict[str, list[Trial]] = defaultdict(list)
    for t in trials:
        for lag in t.item.get("lags", []):
            lags[str(lag)].append(t)
    successes = sum(t.success for t in trials)
    tokens = sum(t.tokens for t in trials)
    latency = sum(t.latency_s for t in trials)
    prompt = sum(t.prompt_tokens for t in trials)
    completion = sum(t.completion_tokens for t in trials)
    if price is not None:
        unsplit = sum(max(0, t.tokens - t.prompt_tokens - t.completion_tokens) for t in trials)
        cost: float | None = price.cost(prompt, completion, unsplit)
    else:
        cost = None if price_per_mtok is None else tokens * price_per_mtok / 1e6
    return {
        "trials": len(trials),
        "items": len(per_item),
        "trials_per_item": trials_per_item,
        "success": _rate_of(trials),
        "success_clean": _rate_of(by_condition.get(CLEAN, [])),
        "success_by_condition": {c: _rate_of(v) for c, v in by_condition.items()},
        "conditional_robustness": robustness,
        "progression": {c: sum(t.stages_passed / t.stages_total for t in v if t.stages_total)
                        / len(v) for c, v in by_condition.items()},
        "success_by_length": _grouped(trials, "length_bucket"),
        "success_by_track": _grouped(trials, "track"),
        **_by_domain(trials, outcome),
        "mission_update_retention_by_lag": {k: _rate_of(v) for k, v in sorted(lags.items())},
        "terminal_status_counts": {
            c: {s: n for s, n in Counter(t.status for t in v).items()} for c, v in by_condition.items()},
        "taxonomy": list(TAXONOMY),
        "pass_k": pass_k,
        "pass_k_by_condition": pass_k_by_condition,
        **breakdown(trials, trials_per_item),
        "noise": noise(trials),
        "usage": {
            "tokens": tokens,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "tokens_per_episode": tokens / len(trials) if trials else None,
            "tokens_per_success": tokens / successes if successes else None,
            "agent_latency_s_per_episode": latency / len(trials) if trials else None,
            "agent_latency_s_per_success": latency / successes if successes else None,
            "price_per_mtok": None if price is not None else price_per_mtok,
            "price_model": None if price is None else price.model,
            "price_input_per_mtok": None if price is None else price.input,
            "price_output_per_mtok": None if price is None else price.output,
            "cost": cost,
            "cost_per_episode": None if cost is None or not trials else cost / len(trials),
            "cost_per_success": None if cost is None or not successes else cost / successes,
        },
    }
