"""Tree scores against hand-computed trees (the predecessor's NodeResult and selection rule)."""

from __future__ import annotations

import pytest

from magma_core.store import scores as sc
from magma_core.store.scores import ScoredCandidate as C


def counts(optimal=0, non_optimal=0, unassessed=0, total=0):
    return {"optimal": optimal, "non-optimal": non_optimal, "unassessed": unassessed, "total_child": total}


def test_a_two_stage_tree_counts_stage_ends_bottom_up():
    # situation 0 (stage 0) -> candidates 1, 2
    #   1: ongoing -> situation 1 -> candidates 3 (optimal end of stage 0), 4 (failed)
    #        3 -> situation 2 (stage 1) -> 5 (acceptable end of stage 1), 6 (leaf, ongoing)
    #   2: exceeded stage 0 (error)
    tree = [
        C(1, 0, 0, sc.ONGOING, 1), C(2, 0, 0, sc.ERROR),
        C(3, 1, 0, sc.OPTIMAL, 2), C(4, 1, 0, sc.ERROR),
        C(5, 2, 1, sc.SUBOPTIMAL), C(6, 2, 1, sc.ONGOING, 3),
    ]
    results = sc.subtree_results(tree)
    assert results[5] == {1: counts(non_optimal=1, total=1)}
    assert results[6] == {1: counts(total=1)}  # a leaf in its stage
    assert results[3] == {0: counts(optimal=1, total=1), 1: counts(non_optimal=1, total=2)}
    assert results[4] == {0: counts(total=1)}
    assert results[1] == {0: counts(optimal=1, total=2), 1: counts(non_optimal=1, total=2)}
    assert results[2] == {0: counts(total=1)}
    # score(1) = 0.4 * 1/2 + 0.16 * 0.5/2 = 0.2 + 0.04
    assert sc.score(results[1]) == pytest.approx(0.24)
    assert sc.score(results[3]) == pytest.approx(0.4 + 0.16 * 0.25)
    assert sc.score(results[2]) == 0.0
    assert sc.score(results[5]) == pytest.approx(0.4 * 0.5)


def test_selection_keeps_candidates_within_a_tenth_of_the_best():
    assert sc.select({1: 0.24, 2: 0.0}) == [1]
    assert sc.select({1: 0.44, 2: 0.35, 3: 0.33}) == [1, 2]
    assert sc.select({1: 0.1, 2: 0.05}) == []  # the best must exceed 0.1
    assert sc.select({}) == []


def test_unassessed_ends_count_in_the_total_only():
    results = sc.subtree_results([C(1, 0, 0, sc.UNASSESSED), C(2, 0, 0, sc.OPTIMAL)])
    assert results[1] == {0: counts(unassessed=1, total=1)}
    assert sc.score(results[1]) == 0.0
    assert sc.score(results[2]) == pytest.approx(0.4)


def test_a_deep_chain_is_scored_without_recursion():
    depth = 5000
    chain = [C(i, i - 1, 0, sc.ONGOING, i) for i in range(1, depth)] + [C(depth, depth - 1, 0, sc.OPTIMAL)]
    results = sc.subtree_results(chain)
    assert results[1] == {0: counts(optimal=1, total=1)}


def test_json_form_round_trips():
    result = {0: counts(optimal=1, total=2), 2: counts(total=1)}
    data = sc.results_to_json(result)
    assert list(data) == ["stage_0", "stage_2"]
    assert sc.results_from_json(data) == result
