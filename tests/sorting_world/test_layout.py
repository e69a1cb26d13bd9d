"""The sorting layouts without the simulator: names, counts, spacing and the import rule."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import pytest

from magma_scenarios.sorting import world
from magma_scenarios.sorting.world import DUO, SINGLE, cube_names, zone_names

#: Gripper clearance between two cubes' centres, after both moved by the full jitter.
MIN_CUBE_GAP = 0.08
MIN_ZONE_GAP = 0.14


def test_names():
    assert cube_names(3) == ["red_cube", "green_cube", "blue_cube"]
    assert cube_names(6)[-1] == "orange_cube"
    assert cube_names() == cube_names(world.DEFAULT_NUM_CUBES) == cube_names(4)
    assert zone_names() == ["zone_a", "zone_b", "zone_c"]
    assert zone_names(2) == ["zone_a", "zone_b"]
    with pytest.raises(ValueError):
        cube_names(7)


@pytest.mark.parametrize(("cubes", "zones"), [(2, 3), (7, 3), (4, 1), (4, 4), (4.0, 3)])
def test_unsupported_counts_are_refused(cubes, zones):
    with pytest.raises(ValueError):
        world.check_counts(cubes, zones)


@pytest.mark.parametrize("layout", [SINGLE, DUO], ids=["single", "duo"])
def test_spacing(layout):
    j = 2 * world.CUBE_JITTER  # two cubes moving towards each other, in x and in y
    for a, b in itertools.combinations(layout.cube_centers, 2):
        dx, dy = max(0.0, abs(a[0] - b[0]) - j), max(0.0, abs(a[1] - b[1]) - j)
        assert math.hypot(dx, dy) >= MIN_CUBE_GAP - 1e-9
    for a, b in itertools.combinations(layout.zone_centers.values(), 2):
        assert math.dist(a, b) >= MIN_ZONE_GAP
    reach = world.ZONE_HALF_SIZE[0] + world.CUBE_HALF_SIZE + world.CUBE_JITTER
    for cube, zone in itertools.product(layout.cube_centers, layout.zone_centers.values()):
        assert max(abs(cube[0] - zone[0]), abs(cube[1] - zone[1])) > reach  # not on a zone


def test_single_layout_stays_in_the_reachable_box():
    points = [*SINGLE.cube_centers, *SINGLE.zone_centers.values()]
    assert all(-0.15 <= x <= 0.2 and abs(y) <= 0.25 for x, y in points)


def test_duo_halves():
    for name in cube_names(6):
        base_y = DUO.robot_bases[DUO.robot_of(name)][1]
        assert DUO.cube_center(name)[1] * base_y > 0  # same half as its robot's base
    assert [DUO.robot_of(n) for n in cube_names(4)] == [0, 1, 0, 1]
    assert DUO.zones_of(0) == ["zone_a", "zone_c"] and DUO.zones_of(1) == ["zone_b", "zone_c"]
    assert SINGLE.zones_of(0) == zone_names(3)


def test_layout_modules_import_no_simulator():
    code = (
        "import sys, magma_scenarios.sorting, magma_scenarios.sorting.world, "
        "magma_scenarios.cube.world; "
        "assert not {'mani_skill', 'sapien'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
