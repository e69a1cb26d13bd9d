"""``magma export SOURCE --format lerobot``: the exporter plug-in (entry point ``magma.export``).

Its rows are episodes (:mod:`.sources`): one per stored run episode that has control steps
(a run made with ``--record-control``) and one per kept path of a generation made with
``--record-control``, each :func:`~.mapping.map_episode` of its record and steps, with where
its world came from. Its writer lays them out as a LeRobot v3.0 dataset in ``OUT/lerobot/``
(:mod:`.layout`), train episodes first, then validation (``info.json``'s ``splits``). With a
render device each frame gets the world's render camera picture (``observation.images.
render_camera``, :mod:`.camera`); without one the dataset has no camera feature and
``info.json``'s ``magma.images`` says why (so does a warning line). What was left out (a
run, generation or episode without control steps) is a warning line too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from magma_core.export.exporter import Exporter, ExporterError
from magma_core.export.rows import ExportForest
from magma_core.export.settings import Notice
from magma_core.integrations.lerobot.layout import write_dataset
from magma_core.integrations.lerobot.sources import generation_rows, run_rows
from magma_core.render.device import render_unavailable
from magma_core.render.video import VideoError
from magma_core.runs.videos import world_of_run
from magma_core.store.reader import StoreReader

__all__ = ["FOLDER", "IMAGE_SIZE", "episode_rows", "lerobot", "write_lerobot"]

FOLDER = "lerobot"  # the dataset's folder in the export's output folder
IMAGE_SIZE = (256, 256)  # (height, width) of the camera frames


def _images() -> dict[str, Any]:
    """What the export does about camera frames, decided once (it goes into every row, so an
    export made without a render device is redone when one is there)."""
    reason = render_unavailable()
    if reason is not None:
        return {"camera": None, "reason": reason}
    return {"camera": "render_camera", "height": IMAGE_SIZE[0], "width": IMAGE_SIZE[1]}


def episode_rows(forest: ExportForest, settings: Any, refused: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """``(group, row)`` per exported episode (:mod:`.sources`: a run's recorded episodes, a
    generation's kept paths); each source left out, and each episode without control steps,
    adds a :class:`Notice`."""
    if forest.store_path is None:
        refused.append(Notice("the lerobot format reads control steps from the store: this "
                              "forest was not read from one"))
        return []
    reader = StoreReader(forest.store_path.parent, forest.store_path)
    images = _images()
    if images["camera"] is None:
        refused.append(Notice(f"no camera frames in the dataset: {images['reason']}"))
    world_of = _world_of if images["camera"] is not None else None
    rows: list[tuple[str, dict[str, Any]]] = []
    for source in forest.sources:
        if source.get("kind") == "run":
            found = run_rows(reader, source, world_of, refused)
        else:
            found = generation_rows(reader, forest, source, settings.min_score, world_of, refused)
        rows += [(group, {**row, "images": images}) for group, row in found]
    return rows


def _world_of(config: dict[str, Any], seed: int) -> list[Any]:
    """[env id, env options, reset options] of the world a stored episode of ``seed`` ran in."""
    try:
        return list(world_of_run(config, seed))
    except VideoError as exc:  # the scenario cannot be loaded here
        raise ExporterError(f"{config.get('preset')}: {exc}") from None


def write_lerobot(output: Path, splits: dict[str, list[dict[str, Any]]]) -> list[Path]:
    """The LeRobot v3.0 dataset of ``splits``' episodes under ``output/lerobot`` (see the
    module); the files written."""
    episodes = [row for split in ("train", "validation") for row in splits.get(split, [])]
    if not episodes:
        return []
    rates = sorted({float(e["rate"]) for e in episodes if e.get("rate")})
    layouts = {(tuple(e["names"]["state"]), tuple(e["names"]["action"])) for e in episodes}
    if len(rates) > 1 or len(layouts) > 1:
        raise ExporterError("a LeRobot dataset has one frame rate and one state/action layout: these "
                            f"episodes have rates {rates} and {len(layouts)} layouts; export runs of one world")
    fps = round(rates[0]) if rates else 20
    images = episodes[0]["images"]
    cameras = None
    frame_image = None
    if images.get("camera"):
        # the simulator is imported only when frames are rendered
        from magma_core.integrations.lerobot.camera import FrameCameras

        cameras = FrameCameras(images["height"], images["width"])

        def frame_image(episode: dict[str, Any], frame: dict[str, Any]) -> bytes:
            return cameras.png(tuple(episode["world"]), frame["world"] or {})
    robots = sorted({r for e in episodes for r in e.get("robots") or []})
    try:
        return write_dataset(
            output / FOLDER, episodes, fps=fps, state_names=episodes[0]["names"]["state"],
            action_names=episodes[0]["names"]["action"],
            splits={split: len(splits.get(split, [])) for split in ("train", "validation")},
            robot_type="+".join(robots) or None, frame_image=frame_image,
            image_size=(images["height"], images["width"]) if frame_image else None,
            magma_info={"images": images, "control_rate_hz": rates[0] if rates else None,
                        "sources": sorted({e["run"] for e in episodes}),
                        "episodes": [e["id"] for e in episodes]},
        )
    finally:
        if cameras is not None:
            cameras.close()


def lerobot() -> Exporter:
    """The ``lerobot`` exporter (registered under the entry-point group ``magma.export``)."""
    return Exporter("lerobot", episode_rows, stem=FOLDER, write=write_lerobot,
                    description="episodes recorded with --record-control as a LeRobot v3.0 dataset",
                    explain_empty=lambda forest, settings: (
                        "no episode has control steps: record them with magma run (or gen) --record-control"))
