"""Suites: a YAML spec compiled into a frozen folder of self-contained benchmark items.

``compile_suite(spec_path, out)`` writes ``items/<item_id>.json`` (one episode each:
skeleton × semantic variation × condition, with its task spec, interventions and metadata),
``index.json`` and ``manifest.json`` (magma's version and a SHA-256 fingerprint over the
canonical files). ``load_suite(folder)`` checks the files against the manifest.

Every item's task is frozen in the generator's task format (``magma.task/1``, see
:mod:`magma_core.bench.task_spec`), so a compiled suite does not change when generator code
does. A suite spec::

    name: mine
    transforms: my_scenarios.shelves.conditions   # default: the scenario manifest's transforms
    conditions: [clean, execution_error, interruption, mission_update, combined]
    condition_options: {at: 0, lag: 0}
    skeletons:
      - {preset: shelves.Stock, track: in_domain}          # length_bucket: from oracle calls
      - {definition: shelves.LongStock, seeds: 7, length_bucket: long}
      - {preset: shelves.Count, scorers: {1: {numeric: 3}}}   # stage 1's answer, no judge

A ``definition`` skeleton entry stands for ``seeds`` skeletons: the first seeds from
``first_seed`` (0) whose generated task falls in ``length_bucket`` (given a budget of
``max_target_tool_calls``, default the bucket's upper bound) and takes every condition.

Named suites (``magma bench compile smoke``) and the default condition transforms are the
scenarios': their manifests declare them (``ScenarioManifest.suites`` and ``.transforms``).
Without a ``transforms`` key each skeleton is perturbed by its own scenario's transforms, so
one suite may mix domains (the report breaks results down by domain).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from magma_core import __version__
from magma_core.bench.conditions import (
    CLEAN,
    CONDITIONS,
    DEFAULT_CONDITIONS,
    GENERIC,
    load_transforms,
    transform,
)
from magma_core.bench.task_spec import task_from_spec, task_to_spec
from magma_core.json_types import JSONDict, JSONValue
from magma_core.scenarios import list_scenarios, load_definition, load_preset
from magma_core.scenarios.construct import construct
from magma_core.scenarios.registry import default_transforms, find_suite
from magma_core.simulation.stage.scorers import scorer_from_config
from magma_core.user_error import UserError

FORMAT = "magma.bench-suite/2"
TRACKS = ("in_domain", "held_out_domain", "compositional")
#: Length buckets by the clean task's oracle tool calls (upper bounds, inclusive).
BUCKETS = (("short", 6), ("mid", 12), ("long", 24), ("very-long", 48), ("extreme", 10**9))
#: How many seeds a definition skeleton entry tries per skeleton it needs.
SEED_SCAN = 50
SKELETON_KEYS = {"preset", "definition", "track", "id", "length_bucket", "condition_options",
                 "seeds", "first_seed", "max_target_tool_calls", "scorers"}


def length_bucket(oracle_calls: int) -> str:
    """The length bucket of a task with ``oracle_calls`` reference tool calls."""
    return next(name for name, bound in BUCKETS if oracle_calls <= bound)


def canonical(data: JSONValue) -> str:
    """Canonical JSON text (sorted keys, 2-space indent, trailing newline)."""
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=True) + "\n"


def _oracle_calls(task_spec: JSONDict) -> int:
    events = (task_spec.get("perfect_trace") or {}).get("events", [])
    return sum(len(e["calls"]) for e in events if e["type"] == "tool_calls")


def read_spec(source: str | Path) -> JSONDict:
    """A suite spec from a YAML file, or a suite an installed scenario declares by name
    (see :func:`magma_core.scenarios.registry.find_suite`)."""
    import yaml

    path = resolve_spec(source)
    try:
        spec = yaml.safe_load(path.read_text())
    except IsADirectoryError:
        raise UserError(f"the suite spec {source} is a folder: give the spec YAML file in it") from None
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


def looks_like_path(text: str) -> bool:
    """Whether a suite argument names a file rather than a suite: it has a folder separator,
    starts with ``.`` or ``~``, or ends in ``.yaml``/``.yml``."""
    return ("/" in text or "\\" in text or text.startswith((".", "~"))
            or text.endswith((".yaml", ".yml")))


def resolve_spec(source: str | Path) -> Path:
    """The spec file ``source`` names: a name (``smoke``, ``pantry``) is the suite an installed
    scenario declares, whatever files lie in the current folder; only a path-like argument
    (:func:`looks_like_path`) or a :class:`~pathlib.Path` is read as a file. A name no
    scenario declares is a one-line error that lists the suites and, when a file or folder of
    that name exists here, says how to name it as a path."""
    if isinstance(source, Path) or looks_like_path(str(source)):
        return Path(source).expanduser()
    name = str(source)
    found = find_suite(name)
    if found is not None:
        return found
    known = ", ".join(installed_suites()) or "none"
    local = Path(name)
    if local.is_dir():
        hint = (f"; ./{name} here is a folder: give the spec YAML in it as a path "
                f"(e.g. ./{name}/suite.yaml)")
    elif local.exists():
        hint = f"; to read the file {name} here, give it as a path: ./{name}"
    else:
        hint = "; a spec file is given by its path (e.g. ./my_suite.yaml)"
    raise UserError(f"{name!r} is read as a suite name, and no installed scenario declares a "
                    f"suite of that name (suites: {known}){hint}")


def installed_suites() -> list[str]:
    """The names of the suites the installed scenarios declare, sorted."""
    return sorted({name for manifest in list_scenarios() for name in manifest.suites})


def _conditions(spec: JSONDict) -> list[str]:
    conditions = list(spec.get("conditions") or DEFAULT_CONDITIONS)
    for condition in conditions:
        if condition not in CONDITIONS:
            raise UserError(f"unknown condition {condition!r}; known: {', '.join(CONDITIONS)}")
    if CLEAN not in conditions:
        conditions.insert(0, CLEAN)  # every perturbed item needs its clean control
    return sorted(set(conditions), key=CONDITIONS.index)


def build_items(spec: JSONDict, target_args: JSONDict | None = None) -> list[JSONDict]:
    """Every item of the suite ``spec`` (clean controls first within each skeleton), each
    preset or definition built with ``target_args`` (constructor keyword arguments)."""
    conditions = _conditions(spec)
    if spec.get("variations", 1) != 1:
        raise UserError("semantic variations other than 1 are not supported yet")
    items: list[JSONDict] = []
    for position, skeleton in enumerate(spec["skeletons"]):
        if not isinstance(skeleton, dict) or ("preset" in skeleton) == ("definition" in skeleton):
            raise UserError(f"skeleton {position} needs a 'preset' or a 'definition'")
        # without a 'transforms' key each skeleton takes its own scenario's (a suite may
        # span several domains)
        named = skeleton.get("preset") or skeleton.get("definition")
        transforms = _transforms_for(spec, named, conditions)
        unknown = set(skeleton) - SKELETON_KEYS
        if unknown:
            raise UserError(f"skeleton {position} has unknown keys: {', '.join(sorted(unknown))}")
        track = skeleton.get("track", "in_domain")
        if track not in TRACKS:
            raise UserError(f"skeleton {position}: track must be one of {', '.join(TRACKS)}")
        options = {**spec.get("condition_options", {}), **skeleton.get("condition_options", {})}
        if "preset" in skeleton:
            clean = task_to_spec(construct(load_preset(skeleton["preset"]), target_args,
                                           skeleton["preset"]))
            clean = with_scorers(clean, skeleton.get("scorers"), position)
            skeleton_id = skeleton.get("id", f"{skeleton['preset']}-{position}")
            bucket = skeleton.get("length_bucket") or length_bucket(_oracle_calls(clean))
            variants = _skeleton_items(transforms, conditions, clean, options)
            items += _items(skeleton_id, skeleton["preset"], track, bucket, clean, variants)
        else:
            for skeleton_id, clean, bucket, variants in _generated(skeleton, position, transforms,
                                                                    conditions, options, target_args):
                items += _items(skeleton_id, skeleton["definition"], track, bucket, clean, variants)
    if len({i["item_id"] for i in items}) != len(items):
        raise UserError("two skeletons have the same id; give them distinct 'id's")
    return items


def _transforms_for(spec: JSONDict, named: str, conditions: list[str]) -> Any:
    """The condition-transforms module a skeleton needs, or None when every condition of the
    suite is one magma applies itself (``clean``, ``paraphrase``): a scenario without a
    transforms module still compiles clean-only suites."""
    needing = [c for c in conditions if c not in (CLEAN, *GENERIC)]
    if not needing:
        return None
    if spec.get("transforms"):
        return load_transforms(spec["transforms"])
    try:
        return load_transforms(default_transforms([named]))
    except UserError as exc:
        raise UserError(f"{exc} (needed by the conditions {', '.join(needing)}; a suite with "
                        "conditions: [clean] needs none; the benchmarking guide's 'Conditions of "
                        "your own' says how to write one)") from None


def with_scorers(clean: JSONDict, scorers: Any, position: int) -> JSONDict:
    """``clean`` with a skeleton's ``scorers`` (``{stage index: scorer}``, each in the short
    form of :func:`~magma_core.simulation.stage.scorers.scorer_from_config`) set on its
    stages; every condition's item inherits them. A bad index, scorer or a scorer on an
    action stage is a one-line error naming the skeleton."""
    if not scorers:
        return clean
    if not isinstance(scorers, dict):
        raise UserError(f"skeleton {position}: scorers is a mapping {{stage index: scorer}}")
    stages = clean["stages"]
    for key, config in scorers.items():
        index = key if isinstance(key, int) and not isinstance(key, bool) else None
        if index is None or not 0 <= index < len(stages):
            raise UserError(f"skeleton {position}: scorers key {key!r} is not a stage index "
                            f"(0..{len(stages) - 1})")
        try:
            stages[index]["scorer"] = scorer_from_config(config).to_spec()
        except ValueError as exc:
            raise UserError(f"skeleton {position}: the scorer of stage {index}: {exc}") from None
    try:
        task_from_spec(clean)
    except (TypeError, ValueError) as exc:
        raise UserError(f"skeleton {position}: {exc}") from None
    return clean


def _skeleton_items(transforms: Any, conditions: list[str], clean: JSONDict,
                    options: JSONDict) -> list[tuple[str, JSONDict, list[JSONDict]]]:
    """(condition, task spec, interventions) for each condition of one skeleton."""
    return [(c, *transform(transforms, c, clean, options)) for c in conditions]


def _generated(skeleton: JSONDict, position: int, transforms: Any, conditions: list[str],
               options: JSONDict, target_args: JSONDict | None = None,
               ) -> list[tuple[str, JSONDict, str, list]]:
    """The skeletons of a definition entry: (id, clean spec, bucket, condition variants)."""
    definition = construct(load_definition(skeleton["definition"]), target_args, skeleton["definition"])
    count, first = skeleton.get("seeds", 1), skeleton.get("first_seed", 0)
    wanted = skeleton.get("length_bucket")
    bounds = dict(BUCKETS)
    if wanted is not None and wanted not in bounds:
        raise UserError(f"skeleton {position}: length_bucket must be one of {', '.join(bounds)}")
    for key, value in (("seeds", count), ("first_seed", first)):
        if not isinstance(value, int) or isinstance(value, bool) or value < (key == "seeds"):
            raise UserError(f"skeleton {position}: {key} must be a whole number")
    budget = skeleton.get("max_target_tool_calls") or (bounds[wanted] if wanted else None)
    out = []
    for seed in range(first, first + SEED_SCAN * count):
        if len(out) == count:
            break
        try:
            task = definition.generate(seed, max_target_tool_calls=budget)
        except (TypeError, ValueError) as exc:
            raise UserError(f"skeleton {position}: {skeleton['definition']} seed {seed}: {exc}") from None
        clean = with_scorers(task_to_spec(task), skeleton.get("scorers"), position)
        bucket = length_bucket(_oracle_calls(clean))
        if wanted is not None and bucket != wanted:
            continue
        try:
            variants = _skeleton_items(transforms, conditions, clean, options)
        except UserError:
            continue  # a condition does not apply to this seed's task: the next seed
        calls = f"-c{budget}" if budget else ""
        out.append((f"{skeleton['definition']}{calls}-s{seed}", clean, bucket, variants))
    if len(out) < count:
        raise UserError(f"skeleton {position}: only {len(out)} of {count} seeds from {first} give "
                        f"a {wanted or 'any'} task every condition applies to")
    return out


def _items(skeleton_id: str, scenario: str, track: str, bucket: str, clean: JSONDict,
           variants: list[tuple[str, JSONDict, list[JSONDict]]]) -> list[JSONDict]:
    """The items of one skeleton, one per condition, each perturbed one paired with the clean."""
    semantic_id = "v0"
    control_id = f"{skeleton_id}.{semantic_id}.{CLEAN}"
    clean_calls = _oracle_calls(clean)
    items = []
    for condition, task, interventions in variants:
        item_id = f"{skeleton_id}.{semantic_id}.{condition}"
        task["name"] = item_id
        items.append({
            "item_id": item_id, "skeleton_id": skeleton_id, "scenario": scenario,
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
    return items


def compile_suite(source: str | Path, out: str | Path,
                  target_args: JSONDict | None = None) -> Path:
    """Compile the suite spec ``source`` into the folder ``out``; returns the manifest path.
    A non-empty ``out`` is refused (suites are frozen; never overwritten). ``target_args``:
    constructor keyword arguments of every skeleton's preset or definition."""
    spec = read_spec(source)
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out} is not empty; compile a suite into a new folder")
    items = build_items(spec, target_args)
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
    items: list[JSONDict]

    def item(self, item_id: str) -> JSONDict:
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
