"""The LeRobot v3.0 dataset layout, written with pyarrow and pandas (LeRobot itself not needed).

A dataset folder, as ``LeRobotDataset(repo_id, root=folder)`` reads it offline::

    meta/info.json              codebase_version "v3.0", fps, features, splits, path templates
    meta/stats.json             min / max / mean / std / count of the numeric features
    meta/tasks.parquet          task text (the index) -> task_index
    meta/subtasks.parquet       stage instruction (the index) -> subtask_index
    meta/episodes/chunk-000/file-000.parquet   one row per episode: length, tasks, where its
                                frames lie (dataset_from_index / _to_index, data chunk and
                                file), and MAGMA's columns (magma/segments, magma/source, ...)
    data/chunk-000/file-000.parquet            one row per frame (see :func:`features_of`)

Camera frames, when given, are ``image`` features stored in the data file as PNG bytes (no
video encoding, so reading needs no video decoder). All episodes go to one data file: the
size of a MAGMA export, far below LeRobot's 100 MB per file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["CODEBASE_VERSION", "DATA_FILE", "EPISODES_FILE", "IMAGE_KEY", "features_of", "write_dataset"]

CODEBASE_VERSION = "v3.0"
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
DATA_FILE = DATA_PATH.format(chunk_index=0, file_index=0)
EPISODES_FILE = "meta/episodes/chunk-000/file-000.parquet"
IMAGE_KEY = "observation.images.render_camera"

#: the per-frame columns MAGMA adds beside LeRobot's own (all shape [1])
MAGMA_FRAME_FEATURES = {"subtask_index": "int64", "stage_index": "int64", "decision_index": "int64",
                        "recovery": "bool", "restored": "bool"}
_DEFAULT_FEATURES = {"timestamp": "float32", "frame_index": "int64", "episode_index": "int64",
                     "index": "int64", "task_index": "int64"}


def features_of(state_names: Sequence[str], action_names: Sequence[str],
                image_size: tuple[int, int] | None = None) -> dict[str, dict[str, Any]]:
    """The ``features`` of info.json: ``observation.state`` and ``action`` (float32 vectors,
    named), the camera image (``image_size`` = (height, width); None: no camera), LeRobot's
    default columns and MAGMA's (:data:`MAGMA_FRAME_FEATURES`)."""
    features: dict[str, dict[str, Any]] = {
        "observation.state": {"dtype": "float32", "shape": [len(state_names)], "names": list(state_names)},
        "action": {"dtype": "float32", "shape": [len(action_names)], "names": list(action_names)},
    }
    if image_size is not None:
        features[IMAGE_KEY] = {"dtype": "image", "shape": [image_size[0], image_size[1], 3],
                               "names": ["height", "width", "channels"]}
    for name, dtype in {**_DEFAULT_FEATURES, **MAGMA_FRAME_FEATURES}.items():
        features[name] = {"dtype": dtype, "shape": [1], "names": None}
    return features


def _index_of(values: Sequence[str]) -> dict[str, int]:
    """Each distinct value -> its index, in order of first appearance."""
    out: dict[str, int] = {}
    for value in values:
        out.setdefault(value, len(out))
    return out


def _stats(rows: list[list[float]] | list[float]) -> dict[str, list[float]]:
    """min / max / mean / std / count of a column (vectors: per component)."""
    vectors = [r if isinstance(r, list) else [r] for r in rows]
    columns = list(zip(*vectors, strict=True)) if vectors else []
    out: dict[str, list[float]] = {"min": [], "max": [], "mean": [], "std": [], "count": [len(vectors)]}
    for column in columns:
        values = [float(v) for v in column]
        mean = sum(values) / len(values)
        out["min"].append(min(values))
        out["max"].append(max(values))
        out["mean"].append(mean)
        out["std"].append(math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)))
    return out


def write_dataset(root: Path, episodes: Sequence[Mapping[str, Any]], *, fps: int,
                  state_names: Sequence[str], action_names: Sequence[str],
                  splits: Mapping[str, int], robot_type: str | None = None,
                  frame_image: Callable[[Mapping[str, Any], Mapping[str, Any]], bytes] | None = None,
                  image_size: tuple[int, int] | None = None,
                  magma_info: Mapping[str, Any] | None = None) -> list[Path]:
    """Write ``episodes`` (:func:`~.mapping.map_episode` dicts with ``id`` and ``source``) as a
    LeRobot v3.0 dataset under ``root``; returns the files written.

    ``splits``: split name -> its number of episodes, in the order the episodes come (info.json
    gets ``"train": "0:k"`` and so on; empty splits are left out). ``frame_image(episode,
    frame)``: the PNG bytes of a frame's camera picture (of ``image_size`` = (height, width));
    None writes no camera feature. ``magma_info`` goes to info.json under ``"magma"``."""
    try:
        import pandas as pd
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # optional dependencies
        raise RuntimeError("the lerobot format needs pandas and pyarrow: pip install 'magma[lerobot]'") from exc
    tasks = _index_of([e["task"] for e in episodes])
    subtasks = _index_of([s["instruction"] for e in episodes for s in e["segments"]] or [""])
    features = features_of(state_names, action_names, image_size if frame_image else None)
    columns: dict[str, list[Any]] = {name: [] for name in features}
    episode_rows: list[dict[str, Any]] = []
    index = 0
    for number, episode in enumerate(episodes):
        frames = episode["frames"]
        stage_subtask = {s["stage"]: subtasks[s["instruction"]] for s in episode["segments"]}
        for k, frame in enumerate(frames):
            columns["observation.state"].append(frame["state"])
            columns["action"].append(frame["action"])
            if frame_image is not None:
                columns[IMAGE_KEY].append({"bytes": frame_image(episode, frame), "path": None})
            columns["timestamp"].append(k / fps)
            columns["frame_index"].append(k)
            columns["episode_index"].append(number)
            columns["index"].append(index + k)
            columns["task_index"].append(tasks[episode["task"]])
            columns["subtask_index"].append(stage_subtask.get(frame["stage"], 0))
            columns["stage_index"].append(frame["stage"])
            columns["decision_index"].append(frame["decision"])
            columns["recovery"].append(bool(frame["recovery"]))
            columns["restored"].append(bool(frame["restored"]))
        episode_rows.append({
            "episode_index": number, "tasks": [episode["task"]], "length": len(frames),
            "data/chunk_index": 0, "data/file_index": 0,
            "dataset_from_index": index, "dataset_to_index": index + len(frames),
            "meta/episodes/chunk_index": 0, "meta/episodes/file_index": 0,
            "magma/source": str(episode["id"]), "magma/status": str(episode.get("status", "")),
            "magma/segments": [{k: s[k] for k in ("stage", "instruction", "from_frame", "to_frame",
                                                  "success", "state", "decisions", "recoveries")}
                               for s in episode["segments"]],
        })
        index += len(frames)
    types = {"float32": pa.float32(), "int64": pa.int64(), "bool": pa.bool_()}
    fields = []
    for name, feature in features.items():
        if feature["dtype"] == "image":
            fields.append(pa.field(name, pa.struct([("bytes", pa.binary()), ("path", pa.string())])))
        elif feature["shape"] == [1]:
            fields.append(pa.field(name, types[feature["dtype"]]))
        else:
            fields.append(pa.field(name, pa.list_(types[feature["dtype"]], feature["shape"][0])))
    schema = pa.schema(fields)
    written = []
    data_path = root / DATA_FILE
    data_path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({f.name: columns[f.name] for f in fields}, schema=schema), data_path)
    written.append(data_path)
    episodes_path = root / EPISODES_FILE
    episodes_path.parent.mkdir(parents=True, exist_ok=True)
    segment = pa.struct([("stage", pa.int64()), ("instruction", pa.string()), ("from_frame", pa.int64()),
                         ("to_frame", pa.int64()), ("success", pa.string()), ("state", pa.string()),
                         ("decisions", pa.list_(pa.int64())), ("recoveries", pa.list_(pa.int64()))])
    episode_schema = pa.schema(
        [pa.field("episode_index", pa.int64()), pa.field("tasks", pa.list_(pa.string())),
         pa.field("length", pa.int64())]
        + [pa.field(k, pa.int64()) for k in ("data/chunk_index", "data/file_index", "dataset_from_index",
                                              "dataset_to_index", "meta/episodes/chunk_index",
                                              "meta/episodes/file_index")]
        + [pa.field("magma/source", pa.string()), pa.field("magma/status", pa.string()),
           pa.field("magma/segments", pa.list_(segment))])
    pq.write_table(pa.Table.from_pylist(episode_rows, schema=episode_schema), episodes_path)
    written.append(episodes_path)
    for name, table, column in (("tasks", tasks, "task_index"), ("subtasks", subtasks, "subtask_index")):
        path = root / "meta" / f"{name}.parquet"
        frame = pd.DataFrame({column: list(table.values())}, index=pd.Index(list(table), name=name[:-1]))
        frame.to_parquet(path)
        written.append(path)
    stats = {name: _stats(columns[name]) for name, f in features.items()
             if f["dtype"] in ("float32", "int64") and columns[name]}
    start, ranges = 0, {}
    for split, count in splits.items():
        if count:
            ranges[split] = f"{start}:{start + count}"
            start += count
    info = {
        "codebase_version": CODEBASE_VERSION, "robot_type": robot_type,
        "total_episodes": len(episodes), "total_frames": index, "total_tasks": len(tasks),
        "chunks_size": 1000, "data_files_size_in_mb": 100, "video_files_size_in_mb": 200,
        "fps": int(fps), "splits": ranges, "data_path": DATA_PATH, "video_path": None,
        "features": features, "magma": dict(magma_info or {}),
    }
    for name, document in (("info", info), ("stats", stats)):
        path = root / "meta" / f"{name}.json"
        path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
        written.append(path)
    return written
