"""Held-out splits that cannot leak (``magma_core.bench.splits``, the sorting scenario's
``splits`` module): the compositional split shares no instruction and no (cube, zone,
template) combination with what the training definitions produce, and a split that does is
refused. No simulator: tasks are generated and frozen, never run."""

from __future__ import annotations

import pytest

from magma_core.bench.splits import (
    check_split,
    refuse_leaks,
    row_instructions,
    spec_combinations,
    spec_instructions,
)
from magma_core.bench.suite import build_items, read_spec
from magma_core.bench.task_spec import task_to_spec
from magma_core.user_error import UserError
from magma_scenarios.sorting.definitions import ShortSorting
from magma_scenarios.sorting.requests import SortCube
from magma_scenarios.sorting.splits import (
    HELD_OUT_COMBINATIONS,
    HELD_OUT_TEMPLATE,
    TRAINING_COMBINATIONS,
    PairSortingTrain,
    ShortSortingCompositional,
    ShortSortingTrain,
)


def training_side(definitions, seeds=range(200)):
    texts, combinations = set(), set()
    for definition in definitions:
        for seed in seeds:
            spec = task_to_spec(definition.generate(seed))
            texts |= spec_instructions(spec)
            combinations |= spec_combinations(spec)
    return texts, combinations


def small_suite(definition: str, seeds: int = 8) -> list[dict]:
    return build_items({"name": "t", "conditions": ["clean"], "skeletons": [
        {"definition": definition, "seeds": seeds, "first_seed": 1000}]})


def test_the_combination_sets_split_every_combination_in_two():
    assert not TRAINING_COMBINATIONS & HELD_OUT_COMBINATIONS
    assert len(TRAINING_COMBINATIONS | HELD_OUT_COMBINATIONS) == 4 * 3 * 3
    # training never shows the held-out template; every cube and zone still occurs in training
    assert all(t != HELD_OUT_TEMPLATE for _, _, t in TRAINING_COMBINATIONS)
    assert {o for o, _, _ in TRAINING_COMBINATIONS} == {o for o, _, _ in HELD_OUT_COMBINATIONS}
    assert {z for _, z, _ in TRAINING_COMBINATIONS} == {z for _, z, _ in HELD_OUT_COMBINATIONS}


def test_the_training_definitions_draw_only_training_combinations():
    _, produced = training_side([ShortSortingTrain(), PairSortingTrain()])
    as_strings = {(o, z, str(t)) for o, z, t in TRAINING_COMBINATIONS}
    assert produced == as_strings  # all of them over 200 seeds, and nothing else


def test_a_compositional_split_has_no_overlap_and_passes_the_check():
    texts, combinations = training_side([ShortSortingTrain(), PairSortingTrain()])
    overlap = check_split("compositional", small_suite("sorting.ShortSortingCompositional"),
                          texts, combinations)
    assert overlap.items == 8 and overlap.instructions > 0 and overlap.combinations > 0
    assert (overlap.verbatim_in_training, overlap.overlapping_combinations) == (0, 0)
    refuse_leaks([overlap], ["compositional"])  # no exception


def test_a_leaking_split_is_refused_with_what_leaked():
    texts, combinations = training_side([ShortSortingTrain()])
    leaking = check_split("compositional", small_suite("sorting.ShortSorting", 20), texts, combinations)
    assert leaking.verbatim_in_training > 0 and leaking.overlapping_combinations > 0
    with pytest.raises(UserError, match="compositional: 20 items") as caught:
        refuse_leaks([leaking], ["compositional"])
    assert leaking.leaked[0] in str(caught.value)
    refuse_leaks([leaking], ["long"])  # only the strict splits are refused


def test_training_rows_count_as_training_text():
    """A held-out instruction found in an exported row's user turn is a verbatim leak even
    when no training definition produced it."""
    items = small_suite("sorting.ShortSortingCompositional", 2)
    instruction = sorted(spec_instructions(items[0]["task"]))[0]
    rows = [{"messages": [{"role": "system", "content": "x"}, {"role": "user", "content": instruction},
                          {"role": "assistant", "content": "done"}]}]
    overlap = check_split("compositional", items, row_instructions(rows), set())
    assert overlap.verbatim_in_training == 1 and overlap.overlapping_combinations == 0


def test_sort_cube_without_combinations_draws_as_before():
    """The restriction is opt-in: the unrestricted request's draws (and so every frozen
    suite's fingerprint) are unchanged, and its combination names its template."""
    import random

    from magma_core.simulation.tasks.generator import setup_state

    definition = ShortSorting()
    state = setup_state(definition, definition.active_requests, 0)
    params = SortCube().sample_parameters(state, random.Random(5))
    rng = random.Random(5)
    pairs = SortCube()._options(state)
    obj, zone = rng.choice(pairs)
    template = rng.choice(SortCube.TEMPLATES)
    assert params == {"object": obj, "zone": zone, "text": template.format(o=obj, z=zone)}
    assert SortCube().combination(params) == (obj, zone, str(SortCube.TEMPLATES.index(template)))


def test_the_shipped_split_suites_compile_with_their_conditions():
    spec = read_spec("split_perturbed")
    assert set(spec["conditions"]) >= {"execution_error", "interruption", "mission_update", "paraphrase"}
    compositional = read_spec("split_compositional")
    assert compositional["skeletons"][0]["definition"] == "sorting.ShortSortingCompositional"
    assert ShortSortingCompositional.active_requests[0].combinations == HELD_OUT_COMBINATIONS
