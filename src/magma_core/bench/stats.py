"""Rates with their evidence: numerator, denominator, a 95% Wilson interval; pass^k; a
two-proportion test for ``--compare``'s marks and the exact McNemar test on paired trials for
its noise floor. Pure functions, no simulator."""

from __future__ import annotations

import math
from math import comb

from magma_core.json_types import JSONDict

Z95 = 1.959963984540054


def wilson(successes: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``successes / total`` ((0, 1) when ``total`` is 0)."""
    if total <= 0:
        return 0.0, 1.0
    p = successes / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def rate(successes: int, total: int) -> JSONDict:
    """``{"num", "den", "rate", "low", "high"}``; ``rate`` is None when ``total`` is 0."""
    low, high = wilson(successes, total)
    return {"num": successes, "den": total,
            "rate": successes / total if total else None, "low": low, "high": high}


def pass_hat_k(trials: list[tuple[int, int]], k: int) -> float | None:
    """τ²-bench's unbiased pass^k: the mean over tasks of C(c, k) / C(n, k), for tasks with
    ``n`` trials of which ``c`` succeeded (``trials`` = [(n, c), ...]). Tasks with fewer than
    ``k`` trials are left out; None when none is left."""
    terms = [comb(c, k) / comb(n, k) for n, c in trials if n >= k]
    return sum(terms) / len(terms) if terms else None


def two_proportion_p(a: tuple[int, int], b: tuple[int, int]) -> float | None:
    """Two-sided p-value of the pooled z-test that two rates ``(num, den)`` are equal."""
    (x1, n1), (x2, n2) = a, b
    if n1 == 0 or n2 == 0:
        return None
    pooled = (x1 + x2) / (n1 + n2)
    var = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if var == 0:
        return 1.0
    z = abs(x1 / n1 - x2 / n2) / math.sqrt(var)
    return math.erfc(z / math.sqrt(2))


def mcnemar_exact_p(gained: int, lost: int) -> float:
    """Two-sided p-value of the exact (binomial) McNemar test on paired outcomes: ``gained``
    pairs failed in the first run and succeeded in the second, ``lost`` the reverse (1.0
    without a discordant pair)."""
    n = gained + lost
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(gained, lost) + 1)) / 2**n
    return min(1.0, 2 * tail)
