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


def test_perturbed_training_tasks_cycle_the_conditions_over_training_seeds():
    from magma_scenarios.sorting.splits import TRAINING_CONDITIONS, PerturbedPairSortingTrain

    definition = PerturbedPairSortingTrain()
    names = [definition.generate(seed).name for seed in range(8)]
    assert "execution_error" in names[1] and "interruption" in names[2]
    assert not any(c in names[0] for c in TRAINING_CONDITIONS[1:])  # seed 0: clean
    slipped = task_to_spec(definition.generate(1))
    assert any(e["spec"]["arguments"].get("errors") for e in slipped["stages"]
               if "errors" in e["spec"]["arguments"])
    picks = [e for e in slipped["perfect_trace"]["events"] if e["type"] == "tool_calls"
             and e["calls"][0]["name"] == "pick"]
    assert len(picks) == 3  # the trace grasps again after the slip (two requests, one slip)
    assert definition.generate(1).to_spec() == slipped | {"name": slipped["name"]}  # same seed, same task


@pytest.mark.sim
def test_generated_training_data_holds_the_slip_and_the_grasp_that_worked(tmp_path):
    """gen + export on the perturbed training definition, through the CLI: a chat row holds
    the failed pick, the tool's report of the slip and the second pick that worked."""
    import json

    from magma_core.cli import main

    out = tmp_path / "runs"
    assert main(["gen", "sorting.PerturbedPairSortingTrain", "--agent", "trace", "--branches", "1",
                 "--trees", "2", "--seed", "0", "--slots", "2", "--out", str(out), "--name", "g"]) == 0
    assert main(["export", "g", "--format", "chat-jsonl", "--validation-ratio", "0", "--out", str(out),
                 "--output", str(tmp_path / "rows")]) == 0
    rows = [json.loads(line) for path in (tmp_path / "rows").glob("*_train.jsonl") for line in path.open()]
    recovered = []
    for row in rows:
        messages = row["messages"]
        for i, message in enumerate(messages):
            if message["role"] == "tool" and "slipped" in message["content"]:
                retry = messages[i + 1]["tool_calls"][0]["function"]
                recovered.append((messages[i - 1]["tool_calls"][0]["function"]["name"], retry["name"],
                                  "succeed" in messages[i + 2]["content"]))
    assert recovered and all(r == ("pick", "pick", True) for r in recovered)


def test_an_item_that_repeats_a_training_task_whole_is_counted():
    from magma_core.bench.splits import spec_sequence

    items = small_suite("sorting.ShortSortingTrain", 6)
    sequences = {spec_sequence(items[0]["task"])}
    overlap = check_split("perturbed", items, set(), set(), sequences)
    same = sum(spec_sequence(i["task"]) == spec_sequence(items[0]["task"]) for i in items)
    assert overlap.tasks_in_training == same >= 1 and overlap.leaks
    assert check_split("perturbed", items, set(), set()).tasks_in_training == -1  # not checked


def test_a_perturbed_split_that_repeats_training_tasks_is_refused():
    from magma_core.bench.splits import spec_sequence

    items = small_suite("sorting.ShortSortingTrain", 4)
    sequences = {spec_sequence(i["task"]) for i in items}
    overlap = check_split("perturbed/clean", items, set(), set(), sequences)
    refuse_leaks([overlap], ["compositional"])  # shared words alone are allowed there
    with pytest.raises(UserError, match="4 of 4 items a training task word for word"):
        refuse_leaks([overlap], ["compositional"], whole_tasks=["perturbed"])
