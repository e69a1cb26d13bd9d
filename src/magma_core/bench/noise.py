"""The bench's noise floor: how often identical trials disagree, and the smallest difference
between two runs that the paired test could call real.

A benchmark run repeats every item K times with the same agent (``--trials K``): any two
trials of one item are identical reruns, so their verdicts disagree only by chance (a
sampling temperature, a noisy agent, timing in a model server). For an item with ``c``
successes in ``n`` trials, ``c * (n - c)`` of its ``n * (n - 1) / 2`` pairs of trials
disagree: that fraction is the item's **flip rate**, an unbiased estimate of the chance that
two reruns of the item disagree (``2 p (1 - p)`` for a success probability ``p``). The run's
flip rate pools the pairs of every item.

Two benchmark runs of one suite are paired trial by trial (same item, same trial index, same
seed), and ``--compare`` tests them with the exact McNemar test (:func:`~magma_core.bench.stats.mcnemar_exact_p`)
on the discordant pairs: ``gained`` (failed in the first run, succeeded in the other) and
``lost``. Rerunning the same agent already makes ``flip rate x pairs`` discordant pairs, half
each way. The **noise floor** is the smallest difference ``m / pairs`` (``m`` = gained - lost)
that the test calls real at p < 0.05 on top of that churn: ``lost = D0 / 2`` and
``gained = D0 / 2 + m`` with ``D0`` the expected discordant pairs. With no flip at all it is
still 6 pairs (``2 / 2**6 < 0.05``): fewer paired trials than that can show no difference.
A difference under the floor is inside the noise: not distinguishable from a rerun.
"""

from __future__ import annotations

from collections import defaultdict

from magma_core.bench.stats import mcnemar_exact_p
from magma_core.bench.trial import Trial
from magma_core.json_types import JSONDict

ALPHA = 0.05
TEST = "exact McNemar, two-sided, p < 0.05, paired by (item, trial)"


def flip_pairs(trials: int, successes: int) -> tuple[int, int]:
    """``(disagreeing, pairs)``: the pairs of an item's ``trials`` whose verdicts differ,
    and all its pairs of trials."""
    return successes * (trials - successes), trials * (trials - 1) // 2


def floor_pairs(expected_discordant: float, pairs: int, alpha: float = ALPHA) -> int | None:
    """The smallest ``m`` (gained - lost) such that ``lost = round(expected_discordant / 2)``
    and ``gained = lost + m`` give an exact McNemar p < ``alpha`` within ``pairs`` paired
    trials; None when no difference that fits can be called real."""
    lost = int(expected_discordant / 2 + 0.5)
    for m in range(1, pairs - 2 * lost + 1):
        if mcnemar_exact_p(lost + m, lost) < alpha:
            return m
    return None


def _floor(flip_rate: float | None, pairs: int) -> JSONDict:
    """``{"pairs", "difference"}`` of the noise floor over ``pairs`` paired trials at
    ``flip_rate`` (taken as 0 when unmeasured)."""
    expected = (flip_rate or 0.0) * pairs
    m = floor_pairs(expected, pairs)
    return {"expected_discordant": expected, "pairs": m,
            "difference": None if m is None or not pairs else m / pairs}


def noise(trials: list[Trial]) -> JSONDict:
    """The report's ``noise`` entry: the flip rate and noise floor overall and per item.

    - ``flip_rate``: ``{"disagreeing", "pairs", "rate"}`` over every item's pairs of trials
      (``rate`` None with fewer than 2 trials per item: nothing to compare);
    - ``mixed_items``: ``{"num", "den"}``, items whose trials did not all agree;
    - ``floor``: over all ``paired_trials``, ``{"expected_discordant", "pairs", "difference"}``
      (``pairs`` = the smallest gained - lost, ``difference`` = that over the paired trials);
    - ``by_item``: per item id, ``{"trials", "successes", "flip_rate", "floor"}`` (``floor``
      the smallest difference in that item's success the test could call real over its own
      trials, None when K is too small for any).
    """
    per_item: dict[str, list[Trial]] = defaultdict(list)
    for t in trials:
        per_item[t.item["item_id"]].append(t)
    disagreeing = pairs = mixed = 0
    by_item: dict[str, JSONDict] = {}
    for item_id, group in per_item.items():
        n, c = len(group), sum(t.success for t in group)
        d, p = flip_pairs(n, c)
        disagreeing, pairs, mixed = disagreeing + d, pairs + p, mixed + (0 < c < n)
        flip = d / p if p else None
        by_item[item_id] = {"trials": n, "successes": c, "flip_rate": flip,
                            "floor": _floor(flip, n)["difference"]}
    flip_rate = disagreeing / pairs if pairs else None
    return {"flip_rate": {"disagreeing": disagreeing, "pairs": pairs, "rate": flip_rate},
            "mixed_items": {"num": mixed, "den": len(per_item)},
            "paired_trials": len(trials), "floor": _floor(flip_rate, len(trials)),
            "test": TEST, "by_item": by_item}


def verdicts(report: JSONDict) -> dict[tuple[str, int], bool]:
    """``(item_id, trial) -> success`` of a report's stored trials (its ``by_item`` verdicts)."""
    out = {}
    for item_id, row in report.get("by_item", {}).items():
        for k, v in enumerate(row.get("verdicts", [])):
            if v is not None:
                out[(item_id, k)] = bool(v)
    return out


def compare_noise(base: JSONDict, other: JSONDict) -> JSONDict:
    """How ``other``'s success differs from ``base``'s over their paired trials, against the
    noise floor at the two runs' mean flip rate: ``{"pairs", "gained", "lost",
    "difference", "p", "flip_rate", "floor", "verdict"}``; ``verdict`` is ``inside`` (the
    difference is under the floor), ``real`` (at or over it and p < 0.05), ``unclear`` (over
    the floor, but the runs churn more than their reruns do: p >= 0.05) or ``unpaired`` (no
    trial in common: different suites)."""
    a, b = verdicts(base), verdicts(other)
    keys = sorted(set(a) & set(b))
    gained = sum(1 for k in keys if b[k] and not a[k])
    lost = sum(1 for k in keys if a[k] and not b[k])
    flips = [r["noise"]["flip_rate"]["rate"] for r in (base, other)
             if r.get("noise", {}).get("flip_rate", {}).get("rate") is not None]
    flip = sum(flips) / len(flips) if flips else None
    floor = _floor(flip, len(keys))
    p = mcnemar_exact_p(gained, lost)
    if not keys:
        verdict = "unpaired"
    elif floor["pairs"] is None or abs(gained - lost) < floor["pairs"]:
        verdict = "inside"
    else:
        verdict = "real" if p < ALPHA else "unclear"
    return {"pairs": len(keys), "gained": gained, "lost": lost,
            "difference": (gained - lost) / len(keys) if keys else None, "p": p,
            "flip_rate": flip, "flip_rate_measured": bool(flips), "floor": floor,
            "verdict": verdict, "test": TEST}


def compare_line(base_name: str, name: str, c: JSONDict) -> str:
    """One sentence on a :func:`compare_noise` result, for the printed report."""
    if c["verdict"] == "unpaired":
        return f"{name} vs {base_name}: no paired trial (not the same suite), so no paired test and no noise floor"
    diff = 100 * c["difference"]
    head = (f"{name} vs {base_name}: {diff:+.1f} points over {c['pairs']} paired trials "
            f"({c['gained']} gained, {c['lost']} lost; exact McNemar p = {c['p']:.3g})")
    flip = ("an unmeasured flip rate (taken as 0: run --trials 2 or more to measure it)"
            if not c["flip_rate_measured"] else f"a flip rate of {100 * c['flip_rate']:.0f}%")
    floor = c["floor"]["difference"]
    bound = (f"no difference over {c['pairs']} paired trials can be called real at {flip}"
             if floor is None else f"the noise floor is ±{100 * floor:.1f} points at {flip}")
    if c["verdict"] == "inside":
        return f"{head}: inside the noise floor, not distinguishable from a rerun ({bound})"
    if c["verdict"] == "real":
        return f"{head}: outside the noise floor, a real difference ({bound})"
    return f"{head}: over the noise floor but not significant: the runs disagree more than reruns do ({bound})"
