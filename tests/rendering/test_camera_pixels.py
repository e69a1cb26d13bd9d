"""The cube world rendered through its overview camera: the red cube's pixels are where its
pose projects through the camera, in each of two slots holding the cube in different places."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from .conftest import require_render

pytestmark = [pytest.mark.sim, pytest.mark.render]

PLACES = [(0.08, -0.15), (-0.06, 0.12)]  # the cube's xy in slot 0 and slot 1


@pytest.fixture(scope="module")
def rendered() -> Iterator[tuple[object, list[dict]]]:
    require_render()
    import magma_scenarios.cube.env  # noqa: F401
    from magma_core.simulation.envs import SimBatch

    sim = SimBatch("MagmaCube-v1", 2, seed=0, backend="cpu", render=True)
    state = sim.get_state()
    for slot, (x, y) in enumerate(PLACES):
        state["actors"]["cube"][slot, :3] = state["actors"]["cube"].new_tensor([x, y, 0.02])
        state["actors"]["cube"][slot, 3:7] = state["actors"]["cube"].new_tensor([1, 0, 0, 0])
    sim.set_state(state)
    images = [sim.camera_images(slot) for slot in range(2)]
    yield sim, images
    sim.close()


def _red(image: np.ndarray) -> np.ndarray:
    rgb = image.astype(np.int32)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    # the cube (0.85, 0.15, 0.1) against the wooden table: much less green than red, and
    # about as much green as blue (the wood has clearly more green than blue)
    return (r > 100) & (r - g > 50) & (g - b < 25)


def _project(sim: object, slot: int, xyz: tuple[float, float, float]) -> np.ndarray:
    sensor = sim.envs[slot]._sensors["overview"]
    params = sensor.get_params()
    extrinsic = params["extrinsic_cv"][0].cpu().numpy()
    intrinsic = params["intrinsic_cv"][0].cpu().numpy()
    camera = extrinsic @ np.array([*xyz, 1.0])
    uvw = intrinsic @ camera
    return uvw[:2] / uvw[2]  # (column, row)


def test_the_worlds_cameras(rendered):
    _, images = rendered
    for slot_images in images:
        assert set(slot_images) == {"overview", "wrist"}
        assert slot_images["overview"].shape == (256, 256, 3)
        assert slot_images["overview"].dtype == np.uint8


def test_red_cube_pixels_where_its_pose_projects(rendered):
    sim, images = rendered
    for slot, (x, y) in enumerate(PLACES):
        mask = _red(images[slot]["overview"])
        assert mask.sum() > 20, f"slot {slot}: no red cube in the picture"
        rows, cols = np.nonzero(mask)
        here = _project(sim, slot, (x, y, 0.02))
        assert abs(cols.mean() - here[0]) < 6 and abs(rows.mean() - here[1]) < 6
        # every red pixel lies within the cube's projected footprint (4 cm: ~15 px here) ...
        assert np.hypot(cols - here[0], rows - here[1]).max() < 20
        # ... and none where the other slot's cube is
        ox, oy = PLACES[1 - slot]
        there = _project(sim, slot, (ox, oy, 0.02))
        c, r = int(round(there[0])), int(round(there[1]))
        assert not mask[max(r - 8, 0):r + 8, max(c - 8, 0):c + 8].any()
    assert not np.array_equal(images[0]["overview"], images[1]["overview"])
