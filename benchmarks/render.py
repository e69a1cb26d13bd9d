"""What rendering costs: ms per frame through a camera, and an episode with and without images.

Prints, for the cube world on this machine's render device (software Vulkan on a CPU
machine: ``make render``):

* the first frame of the process (the renderer's start: shaders, textures);
* ms per frame of the scene camera (``render_camera``) at 256 x 256 and 512 x 512, median of
  ``--frames`` renders of a world whose state changes between frames;
* ms per decision for ``--observe images``: the world's cameras (``overview`` 256 x 256 and
  ``wrist`` 128 x 128) rendered and PNG-encoded as the run loop does;
* the wall time per episode of ``cube.PickPlace`` with the trace agent, without images and
  with ``--observe images`` (median over ``--episodes``; the first-frame cost lands in the
  first episode with images).

Without a render device it prints the one-line reason and exits 0. Figures only; nothing is
asserted.

    .venv/bin/python benchmarks/render.py [--frames 20] [--episodes 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from magma_core.render import render_unavailable


def _frame_ms(size: int, frames: int) -> tuple[float, float]:
    """(first frame s, median ms per later frame) of ``render_camera`` at ``size`` square."""
    import torch

    import magma_scenarios.cube.env  # noqa: F401  (registers MagmaCube-v1)
    from magma_core.simulation.envs import SimBatch

    sim = SimBatch("MagmaCube-v1", 1, seed=0, backend="cpu", render=True,
                   env_options={"human_render_camera_configs": {"width": size, "height": size}})
    env = sim.envs[0]
    try:
        start = time.perf_counter()
        env.render_rgb_array("render_camera")
        first = time.perf_counter() - start
        state = sim.get_state()
        times = []
        for k in range(frames):
            state["actors"]["cube"][0, 0] = 0.05 * ((k % 4) - 1.5)
            sim.set_state(state)
            start = time.perf_counter()
            image = env.render_rgb_array("render_camera")
            times.append(time.perf_counter() - start)
        assert isinstance(image, torch.Tensor) and image.shape[1] == size
        return first, statistics.median(times) * 1e3
    finally:
        sim.close()


def _observe_ms(frames: int) -> float:
    """Median ms to render and PNG-encode the cube world's cameras once (one decision)."""
    import magma_scenarios.cube.env  # noqa: F401
    from magma_core.render.images import image_entry
    from magma_core.simulation.envs import SimBatch

    sim = SimBatch("MagmaCube-v1", 1, seed=0, backend="cpu", render=True)
    try:
        sim.camera_images(0)
        times = []
        for _ in range(frames):
            start = time.perf_counter()
            for name, rgb in sim.camera_images(0).items():
                image_entry(name, rgb)
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1e3
    finally:
        sim.close()


def _episodes(episodes: int, observe: tuple[str, ...]) -> list[float]:
    from magma_core.runs import RunSpec, run

    with tempfile.TemporaryDirectory() as folder:
        result = run(RunSpec("cube.PickPlace", agent="trace", episodes=episodes, out=Path(folder),
                             name="render-bench", observe=observe))
        return [s.wall_s for s in result.summaries]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=20, help="frames per size (20)")
    parser.add_argument("--episodes", type=int, default=3, help="episodes per setting (3)")
    parser.add_argument("--smoke", action="store_true", help="a tiny setting, for the test suite")
    args = parser.parse_args()
    reason = render_unavailable()
    if reason is not None:
        print(f"render benchmark: nothing measured: {reason}")
        return
    sizes = (64,) if args.smoke else (256, 512)
    if args.smoke:
        args.frames, args.episodes = 2, 1
    for size in sizes:
        first, ms = _frame_ms(size, args.frames)
        print(f"render_camera {size}x{size}: {ms:.0f} ms per frame (median of {args.frames}); "
              f"first frame of its world {first:.2f} s")
    if args.smoke:
        return
    print(f"--observe images: {_observe_ms(args.frames):.0f} ms per decision "
          "(overview 256x256 + wrist 128x128, rendered and PNG-encoded)")
    plain = _episodes(args.episodes, ())
    images = _episodes(args.episodes, ("images",))
    print(f"cube.PickPlace episode (trace agent): {statistics.median(plain):.2f} s without images, "
          f"{statistics.median(images):.2f} s with --observe images "
          f"(medians of {args.episodes}; with images, each: "
          f"{', '.join(f'{w:.2f}' for w in images)} s)")


if __name__ == "__main__":
    main()
