"""Suites: a YAML spec compiled into a frozen folder of self-contained benchmark items.

``compile_suite(spec_path, out)`` writes ``items/<item_id>.json`` (one episode each:
skeleton × semantic variation × condition, with its task spec, interventions and metadata),
``index.json`` and ``manifest.json`` (magma's version and a SHA-256 fingerprint over the
canonical files). ``load_suite(folder)`` checks the files against the manifest.

A suite spec::

    name: smoke
    transforms: magma_scenarios.sorting.bench_conditions   # the scenario's condition transforms
    conditions: [clean, execution_error, interruption, mission_update, combined]
    condition_options: {at: 0, lag: 0}
    skeletons:                      # presets now (definitions + seeds later)
      - {preset: sorting.SortAll, track: in_domain}       # length_bucket: from oracle calls
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from magma_core import __version__
from magma_core.bench.conditions import CLEAN, CONDITIONS, load_transforms, transform
from magma_core.bench.task_spec import task_to_spec
from magma_core.scenarios import load_preset
from magma_core.user_error import UserError

FORMAT = "magma.bench-suite/1"
TRACKS = ("in_domain", "held_out_domain", "compositional")
#: Length buckets by the clean task's oracle tool calls (upper bounds, inclusive).
BUCKETS = (("short", 6), ("mid", 12), ("long", 24), ("very-long", 48), ("extreme", 10**9))
BUILTIN_DIR = Path(__file__).parent / "suites"


def length_bucket(oracle_calls: int) -> str:
    """The length bucket of a task with ``oracle_calls`` reference tool calls."""
    return next(name for name, bound in BUCKETS if oracle_calls <= bound)


def canonical(data: Any) -> str:
    """Canonical JSON text (sorted keys, 2-space indent, trailing newline)."""
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=True) + "\n"


def _oracle_calls(task_spec: dict[str, Any]) -> int:
    events = (task_spec.get("perfect_trace") or {}).get("events", [])
    return sum(len(e["calls"]) for e in events if e["type"] == "tool_calls")


def read_spec(source: str | Path) -> dict[str, Any]:
    """A suite spec from a YAML file, or a built-in suite by name (``smoke``, ``sorting``)."""
    import yaml

    path = Path(source)
    if not path.exists() and (BUILTIN_DIR / f"{source}.yaml").exists():
        path = BUILTIN_DIR / f"{source}.yaml"
    try:
        spec = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise UserError(f"cannot read the suite spec {source}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"the suite spec {source} is not valid YAML: {exc}") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("skeletons"), list):
        raise UserError(f"the suite spec {source} needs a 'skeletons' list")
    unknown = set(spec) - {"name", "transforms", "conditions", "condition_options", "skeletons",
                           "variations", "description"}
    if unknown:
        raise UserError(f"the suite spec {source} has unknown keys: {', '.join(sorted(unknown))}")
    return spec


def build_items(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Every item of the suite ``spec`` (clean controls first within each skeleton)."""
    conditions = list(spec.get("conditions") or CONDITIONS)
    for condition in conditions:
        if condition not in CONDITIONS:
            raise UserError(f"unknown condition {condition!r}; known: {', '.join(CONDITIONS)}")
    if CLEAN not in conditions:
        conditions.insert(0, CLEAN)  # every perturbed item needs its clean control
    conditions.sort(key=CONDITIONS.index)
    if spec.get("variations", 1) != 1:
        raise UserError("semantic variations other than 1 need definitions (not yet)")
    transforms = load_transforms(spec.get("transforms", "magma_scenarios.sorting.bench_conditions"))
    items: list[dict[str, Any]] = []
    for position, skeleton in enumerate(spec["skeletons"]):
        if not isinstance(skeleton, dict) or "preset" not in skeleton:
            raise UserError(f"skeleton {position} needs a 'preset'")
        track = skeleton.get("track", "in_domain")
        if track not in TRACKS:
            raise UserError(f"skeleton {position}: track must be one of {', '.join(TRACKS)}")
        clean = task_to_spec(load_preset(skeleton["preset"])())
        skeleton_id = skeleton.get("id", f"{skeleton['preset']}-{position}")
        clean_calls = _oracle_calls(clean)
        bucket = skeleton.get("length_bucket") or length_bucket(clean_calls)
        options = {**spec.get("condition_options", {}), **skeleton.get("condition_options", {})}
        semantic_id = "v0"
        control_id = f"{skeleton_id}.{semantic_id}.{CLEAN}"
        for condition in conditions:
            task, interventions = transform(transforms, condition, clean, options)
            item_id = f"{skeleton_id}.{semantic_id}.{condition}"
            task["name"] = item_id
            items.append({
                "item_id": item_id, "skeleton_id": skeleton_id, "scenario": skeleton["preset"],
                "track": track, "semantic_id": semantic_id, "condition": condition,
                "length_bucket": bucket, "interventions": interventions, "task": task,
                "metadata": {
                    "clean_oracle_tool_calls": clean_calls,
                    "episode_oracle_tool_calls": _oracle_calls(task),
                    "number_of_stages": len(task["stages"]),
                    "number_of_interventions": len(interventions),
                    "intervention_stages": [i["injected_at_stage"] for i in interventions],
                    "intervention_lags": [i["relevant_at_stage"] - i["injected_at_stage"]
                                          for i in interventions if i["type"] == "mission_update"],
                    "control_episode_id": None if condition == CLEAN else control_id,
                },
            })
    if len({i["item_id"] for i in items}) != len(items):
        raise UserError("two skeletons have the same id; give them distinct 'id's")
    return items


def compile_suite(source: str | Path, out: str | Path) -> Path:
    """Compile the suite spec ``source`` into the folder ``out``; returns the manifest path.
    A non-empty ``out`` is refused (suites are frozen; never overwritten)."""
    spec = read_spec(source)
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out} is not empty; compile a suite into a new folder")
    items = build_items(spec)
    name = spec.get("name") or Path(str(source)).stem
    files: dict[str, str] = {}
    (out / "items").mkdir(parents=True, exist_ok=True)
    for item in items:
        item["suite"] = name
        rel = f"items/{item['item_id']}.json"
        files[rel] = _write(out / rel, canonical(item))
    index = {"suite": name, "items": [
        {k: item[k] for k in ("item_id", "skeleton_id", "track", "semantic_id", "condition",
                              "length_bucket")}
        | {"path": f"items/{item['item_id']}.json",
           "control_episode_id": item["metadata"]["control_episode_id"]}
        for item in items]}
    files["index.json"] = _write(out / "index.json", canonical(index))
    manifest = {"format": FORMAT, "suite": name, "magma_version": __version__,
                "items": len(items), "files": files, "fingerprint": fingerprint(files)}
    path = out / "manifest.json"
    path.write_text(canonical(manifest))
    return path


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return hashlib.sha256(text.encode()).hexdigest()


def fingerprint(files: dict[str, str]) -> str:
    """SHA-256 over the sorted ``path sha256`` lines of the suite's files."""
    lines = "".join(f"{p} {h}\n" for p, h in sorted(files.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


@dataclass
class Suite:
    """A compiled suite, checked against its manifest."""

    folder: Path
    name: str
    fingerprint: str
    items: list[dict[str, Any]]

    def item(self, item_id: str) -> dict[str, Any]:
        return next(i for i in self.items if i["item_id"] == item_id)


def load_suite(folder: str | Path) -> Suite:
    """The suite in ``folder``; a missing, edited or incomplete suite is a one-line error."""
    folder = Path(folder)
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"{folder} is not a compiled suite (manifest.json: {exc})") from None
    if manifest.get("format") != FORMAT:
        raise UserError(f"{folder}/manifest.json is not a {FORMAT} manifest")
    files = manifest["files"]
    for rel, digest in files.items():
        try:
            actual = hashlib.sha256((folder / rel).read_bytes()).hexdigest()
        except OSError:
            raise UserError(f"suite {folder}: {rel} is missing") from None
        if actual != digest:
            raise UserError(f"suite {folder}: {rel} changed since it was compiled")
    if fingerprint(files) != manifest["fingerprint"]:
        raise UserError(f"suite {folder}: the manifest's fingerprint does not match its files")
    index = json.loads((folder / "index.json").read_text())
    items = [json.loads((folder / entry["path"]).read_text()) for entry in index["items"]]
    return Suite(folder, manifest["suite"], manifest["fingerprint"], items)
