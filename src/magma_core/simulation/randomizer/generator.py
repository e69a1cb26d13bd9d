"""``SpecGenerator``: draws ``RandomizationSpec``s for a task from its randomization YAML.

``generate_random_spec(task)`` picks one public name, description and value list per entry
with its own ``random.Random(seed)`` and shuffles the attribute order;
``generate_N_spec(task, n)`` builds n deterministic variations (variation i takes entry
``i mod len`` of every list, config order kept).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from magma_core.json_types import JSONDict
from magma_core.simulation.randomizer.config import load_config, resolve_config_path
from magma_core.simulation.randomizer.spec import RandomizationSpec, check_value_pairs
from magma_core.simulation.skills import agent_tools

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.simulation.tasks.base_task import BaseTask

Pick = Callable[[list[str]], str]
ROBOTS = "known_robots"


def task_names(task: BaseTask, skills: Sequence[type] | None = None) -> tuple[list[JSONDict], JSONDict]:
    """The task's canonical tools as the agent sees them and its attributes (all values it may
    show). With ``skills`` (None: the task's own ``skills``, if any) the tools are the skill
    list the engine shows (``skills.agent_tools``)."""
    tools = task.Tools_cls.get_api_description()
    skills = getattr(task, "skills", None) if skills is None else skills
    if skills is not None:
        tools = agent_tools(tools, list(skills))
    situation = task.situation_init
    attributes = copy.deepcopy(situation.all_task_attributes)
    for key, value in situation.attributes.items():
        attributes.setdefault(key, copy.deepcopy(value))
    return tools, attributes


#: Deprecated alias of :func:`task_names` (the name before issue 39).
task_vocabulary = task_names


class SpecGenerator:
    """Builds specs from a config (``config=`` a checked dict, else the task's YAML)."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)

    def load(self, task: BaseTask) -> JSONDict:
        path = getattr(task, "randomized_config_path", "")
        if not path:
            raise TypeError(f"task {getattr(task, 'name', task)!r} has no randomized_config_path")
        return load_config(resolve_config_path(task, path))

    def generate_random_spec(self, task: BaseTask, config: JSONDict | None = None,
                             skills: Sequence[type] | None = None) -> RandomizationSpec:
        """One spec with random choices (and shuffled attribute order); ``skills``: the run's
        skills when they are not the task's own (see :func:`task_names`)."""
        config = self.load(task) if config is None else config
        return _build(task, config, self._rng.choice, shuffle=self._rng.shuffle, skills=skills)

    def generate_N_spec(
        self, task: BaseTask, n: int | None = None, config: JSONDict | None = None,
        skills: Sequence[type] | None = None,
    ) -> list[RandomizationSpec]:
        """``n`` indexed specs (default: the longest configurable list)."""
        config = self.load(task) if config is None else config
        if n is None:
            n = max([1, *_list_lengths(config)])
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        return [_build(task, config, lambda xs, i=i: xs[i % len(xs)], shuffle=None, skills=skills)
                for i in range(n)]


def _list_lengths(config: JSONDict) -> list[int]:
    out = []
    for entry in config["tools"].values():
        out += [len(entry["name"]), len(entry.get("description", []) or [1])]
        for spec in (entry.get("parameters") or {}).values():
            out += [len(spec["name"]), len(spec.get("description", []) or [1])]
    out += [len(v) for v in (config.get("attributes") or {}).values()]
    out += [len(e["variations"]) for e in (config.get("semantic_attributes") or {}).values()]
    return out


def _build(task: BaseTask, config: JSONDict, pick: Pick, shuffle: Callable | None,
           skills: Sequence[type] | None = None) -> RandomizationSpec:
    tools, attributes = task_names(task, skills)
    equivalence, public_tools = _tools(tools, config["tools"], pick)
    pairs = _attribute_pairs(attributes, config, pick)
    check_value_pairs(pairs)
    keys = [k for k in attributes if k != ROBOTS]
    order: dict[str, list[str]] = {}
    for key, value in attributes.items():
        if key == ROBOTS or not isinstance(value, list):
            continue
        shown = [pairs.get(v, v) if isinstance(v, str) else v for v in value]
        if shuffle is not None:
            shuffle(shown)
        order[key] = [v for v in shown if isinstance(v, str)]
    if shuffle is not None:
        shuffle(keys)
    return RandomizationSpec(
        tool_equivalence=equivalence,
        attributes_equivalence=pairs,
        tools=public_tools,
        attribute_keys_order=keys,
        attribute_values_order=order,
    )


def _tools(descriptions: list[JSONDict], config: JSONDict, pick: Pick) -> tuple[dict[str, JSONDict], list[JSONDict]]:
    equivalence: dict[str, JSONDict] = {}
    public_tools: list[JSONDict] = []
    for tool in descriptions:
        entry = config.get(tool["name"]) or {}
        public = pick(entry["name"]) if entry else tool["name"]
        if public in equivalence:
            raise ValueError(f"two tools get the public name {public!r}")
        description = pick(entry["description"]) if entry.get("description") else tool["description"]
        params_config = entry.get("parameters") or {}
        mapping: dict[str, str] = {}
        parameters: JSONDict = {}
        for real, spec in tool["parameters"].items():
            cfg = params_config.get(real) or {}
            name = pick(cfg["name"]) if cfg else real
            if name in mapping:
                raise ValueError(f"tool {public!r}: two parameters get the public name {name!r}")
            mapping[name] = real
            parameters[name] = {**spec, "description": pick(cfg["description"])
                                if cfg.get("description") else spec["description"]}
        equivalence[public] = {"name": tool["name"], "parameters": mapping}
        public_tools.append({**copy.deepcopy(tool), "name": public, "description": description,
                             "parameters": parameters})
    return equivalence, public_tools


def _attribute_pairs(attributes: JSONDict, config: JSONDict, pick: Pick) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for key, variations in (config.get("attributes") or {}).items():
        values = attributes.get(key)
        if key == ROBOTS or not isinstance(values, list):
            continue
        chosen = pick(variations)
        if len(chosen) < len(values):
            raise TypeError(f"attributes.{key}: a variation has {len(chosen)} values, the task {len(values)}")
        for canonical, public in zip(values, chosen, strict=False):
            if not isinstance(canonical, str):
                raise TypeError(f"attributes.{key}: canonical value {canonical!r} is not a str")
            pairs[canonical] = public
    for family, entry in (config.get("semantic_attributes") or {}).items():
        roots = entry.get("canonical") or attributes.get(family)
        if not isinstance(roots, list) or not roots:
            raise ValueError(f"semantic_attributes.{family}: no canonical roots (no attribute {family!r})")
        if len(set(roots)) != len(roots):
            raise ValueError(f"semantic_attributes.{family}: duplicate canonical roots")
        for variation in entry["variations"]:
            if len(variation) != len(roots) or len(set(variation)) != len(variation):
                raise ValueError(f"semantic_attributes.{family}: each variation needs "
                                 f"{len(roots)} distinct values")
        chosen = pick(entry["variations"])
        for form in entry["forms"]:
            for root, public_root in zip(roots, chosen, strict=True):
                pairs[form.format(value=root)] = form.format(value=public_root)
    return pairs
