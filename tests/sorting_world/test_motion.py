"""Scripted sorting on the real simulator: every cube into a zone, with one arm and with two.

Trajectories come from ``magma_scenarios.common.tabletop`` and run through the motion layer
(``run_trajectories``), all slots of a batch at once; success is ``tabletop.in_zone``.
"""

from __future__ import annotations

import pytest

from magma_core.simulation.motion import MotionPlan, run_trajectories
from magma_scenarios.common.tabletop import (
    free_spot,
    held_object,
    in_zone,
    pick_trajectory,
    place_trajectory,
)
from magma_scenarios.sorting.world import DUO, ZONE_HALF_SIZE, cube_names, zone_names

pytestmark = pytest.mark.sim

CUBES6 = cube_names(6)
ZONES3 = zone_names(3)


def test_one_arm_sorts_six_cubes_into_three_zones(sorting6):
    """Cubes go to zone_a, zone_b, zone_c in turn (two per zone), each dropped on a free spot;
    one ``run_trajectories`` call per cube moves both slots (seeds 0 and 1)."""
    sorting6.reset(seed=0)
    target = {name: ZONES3[i % 3] for i, name in enumerate(CUBES6)}
    for name in CUBES6:
        obs = sorting6.observe()
        others = [o for o in CUBES6 if o != name]
        plans = [
            MotionPlan(
                slot,
                pick_trajectory(obs["extra"][name][slot])
                + place_trajectory(free_spot(obs, target[name], slot, others, ZONE_HALF_SIZE)),
            )
            for slot in range(sorting6.num_slots)
        ]
        results = run_trajectories(sorting6, plans)
        assert all(r.ok for r in results), [r.reason for r in results]
    obs = sorting6.observe()
    for slot in range(sorting6.num_slots):
        assert held_object(obs, slot, CUBES6) is None
        missed = [n for n in CUBES6 if not in_zone(obs, n, target[n], slot, ZONE_HALF_SIZE)]
        assert not missed, (slot, missed)


#: Per robot, in order: (cube, zone, side of the zone's centre to drop it on, along x).
DUO_PLAN = {
    0: [("red_cube", "zone_a", -1), ("blue_cube", "zone_c", -1), ("purple_cube", "zone_a", 1)],
    1: [("green_cube", "zone_b", -1), ("yellow_cube", "zone_b", 1), ("orange_cube", "zone_c", 1)],
}


def test_two_arms_sort_their_cubes_concurrently(duo6):
    """Both arms sort their three cubes in one ``run_trajectories`` call (both slots): each
    into its own zone and ``zone_c``, which they share through an execution group."""
    obs = duo6.reset(seed=0)
    plans, order = [], []
    for slot in range(duo6.num_slots):
        for robot, steps in DUO_PLAN.items():
            for cube, zone, side in steps:
                x, y = DUO.zone_centers[zone]
                poses = pick_trajectory(obs["extra"][cube][slot]) + place_trajectory(
                    (x + side * ZONE_HALF_SIZE[0] / 2, y)
                )
                group = "zone_c" if zone == "zone_c" else None
                plans.append(MotionPlan(slot, poses, robot=robot, execution_group=group))
                order.append((slot, robot, cube, zone))
    results = run_trajectories(duo6, plans)
    assert all(r.ok for r in results), [r.reason for r in results]

    by_key = {(s, r, c): res for (s, r, c, _), res in zip(order, results, strict=True)}
    for slot in range(duo6.num_slots):
        first0, first1 = by_key[slot, 0, "red_cube"], by_key[slot, 1, "green_cube"]
        assert first0.start_step == first1.start_step == 0  # the arms move together
        shared_0, shared_1 = by_key[slot, 0, "blue_cube"], by_key[slot, 1, "orange_cube"]
        assert shared_1.start_step >= shared_0.end_step  # zone_c: one arm after the other

    obs = duo6.observe()
    for slot in range(duo6.num_slots):
        for tcp in ("tcp_0", "tcp_1"):
            assert held_object(obs, slot, CUBES6, tcp) is None
        missed = [
            cube
            for steps in DUO_PLAN.values()
            for cube, zone, _ in steps
            if not in_zone(obs, cube, zone, slot, ZONE_HALF_SIZE)
        ]
        assert not missed, (slot, missed)
