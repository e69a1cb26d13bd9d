"""The sorting scenario's held-out splits for the learning-curve experiment
(``benchmarks/learning_curve.py``): which combinations training may produce, which it may not.

A ``SortCube`` instruction combines an object, a zone and one of three templates (4 x 3 x 3 = 36
combinations). Training sees 16 of them: 8 of the 12 (object, zone) pairs in the first two
templates. The compositional split asks for the other 20: the 4 held-out pairs (one per cube,
so every cube and every zone still occurs in training, only not together) in any template, and
every pair in the held-out third template ("Place the ... in ..."), whose wording training never
shows. The definitions below draw only from their own set, so the split cannot leak by
construction, and ``magma_core.bench.splits`` checks it by code all the same.

| definition | requests | used for |
| --- | --- | --- |
| ``ShortSortingTrain`` | ``SortCube`` over the training combinations | training data (seeds < 1000) |
| ``ShortSortingCompositional`` | ``SortCube`` over the held-out combinations | the compositional split |
| ``PairSortingTrain`` | that request and a colour family, chained | the perturbed split (seeds 1000+), perturbed training data |
| ``PerturbedPairSortingTrain`` | those tasks under a grasp slip, an interruption or a mission update (by seed) | training data that holds recoveries |
| ``LongSortingTrain`` | ``LongSorting``'s requests, ``SortCube`` over the training combinations | longer-horizon training data |
"""

from __future__ import annotations

import copy

from magma_core.simulation.tasks.generated import GeneratedTask
from magma_scenarios.sorting.definitions import LongSorting, ShortSorting
from magma_scenarios.sorting.requests import (
    ChangeTarget,
    ClearZone,
    ForbidRule,
    SortColourFamily,
    SortCube,
    TableQuestion,
)
from magma_scenarios.sorting.world import cube_names, zone_names

CUBES = cube_names(4)
ZONES = zone_names(3)
#: the instruction template training never shows ("Place the {o} in {z}.")
HELD_OUT_TEMPLATE = 2
#: one (object, zone) pair per cube, no two sharing a zone more than twice
HELD_OUT_PAIRS = frozenset({(CUBES[0], ZONES[2]), (CUBES[1], ZONES[0]),
                            (CUBES[2], ZONES[1]), (CUBES[3], ZONES[0])})
ALL_COMBINATIONS = frozenset((o, z, t) for o in CUBES for z in ZONES
                             for t in range(len(SortCube.TEMPLATES)))
TRAINING_COMBINATIONS = frozenset((o, z, t) for o, z, t in ALL_COMBINATIONS
                                  if (o, z) not in HELD_OUT_PAIRS and t != HELD_OUT_TEMPLATE)
HELD_OUT_COMBINATIONS = ALL_COMBINATIONS - TRAINING_COMBINATIONS
#: the first seed of every held-out suite; training data is generated from seeds below it
HELD_OUT_FIRST_SEED = 1000


class ShortSortingTrain(ShortSorting):
    """``ShortSorting`` drawing only the training combinations (training data, the perturbed
    split)."""

    name = "ShortSortingTrain"
    active_requests = [SortCube(TRAINING_COMBINATIONS)]


class ShortSortingCompositional(ShortSorting):
    """``ShortSorting`` drawing only the held-out combinations (the compositional split)."""

    name = "ShortSortingCompositional"
    active_requests = [SortCube(HELD_OUT_COMBINATIONS)]


class LongSortingTrain(LongSorting):
    """``LongSorting`` whose single-cube requests draw only the training combinations
    (longer-horizon training data)."""

    name = "LongSortingTrain"
    active_requests = [SortCube(TRAINING_COMBINATIONS), SortColourFamily(), ClearZone(),
                       ForbidRule(), TableQuestion(judged=False), ChangeTarget()]


class PairSortingTrain(ShortSortingTrain):
    """A ``SortCube`` over the training combinations and a colour family ("put every warm
    cube in zone_b": a stage per cube, the later ones in progress), chained: long enough for
    an interruption or a mission update to fall inside the work (the perturbed split, and the
    perturbed training data)."""

    name = "PairSortingTrain"
    active_requests = [SortCube(TRAINING_COMBINATIONS), SortColourFamily()]
    max_target_tool_calls = 9
    max_stages = 6


#: the perturbation families of the perturbed split, cycled over training seeds (clean first)
TRAINING_CONDITIONS = ("clean", "execution_error", "interruption", "mission_update")


class PerturbedPairSortingTrain(PairSortingTrain):
    """``PairSortingTrain`` tasks perturbed as the bench perturbs its items: seed ``s`` gets
    ``TRAINING_CONDITIONS[s % 4]`` (a grasp slip the reference trace grasps again after, an
    interruption, a changed mission), through the same transforms as ``split_perturbed``
    (``bench_conditions``), so generated trees hold the world's failures and the reactions
    that worked. A condition that does not apply to a seed's task leaves it clean. Training
    seeds only: the perturbed split's tasks come from seeds 1000+ and are never produced here.
    """

    name = "PerturbedPairSortingTrain"

    def generate(self, seed: int, **options: object) -> GeneratedTask:
        task = super().generate(seed, **options)
        condition = TRAINING_CONDITIONS[seed % len(TRAINING_CONDITIONS)]
        if condition == "clean":
            return task
        from magma_scenarios.sorting import bench_conditions

        try:
            spec, _ = bench_conditions.apply(condition, copy.deepcopy(task.to_spec()), {"at": 0, "lag": 0})
        except ValueError:
            return task
        perturbed = GeneratedTask.from_spec(spec)
        perturbed.name = f"{task.name}.{condition}"
        return perturbed


class PairSortingHeldOut(PairSortingTrain):
    """``PairSortingTrain``'s chain with the single-cube request over the held-out
    combinations: the perturbed split's tasks, so that no held-out task repeats a training
    task word for word and its clean controls measure the same tasks unperturbed."""

    name = "PairSortingHeldOut"
    active_requests = [SortCube(HELD_OUT_COMBINATIONS), SortColourFamily()]
