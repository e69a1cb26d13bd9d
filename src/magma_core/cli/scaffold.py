"""The files of a new scenario package (``magma new scenario NAME``), every id and path
derived from NAME: a world with a block and two target zones, pick/place tools, a stage, a
preset with its reference trace, a definition, a benchmark suite, a test, the manifest and
``pyproject.toml``.

:func:`write_scenario_package` writes them; the package installs with ``pip install -e`` and
its own test (``python tests/test_NAME.py``, or pytest) runs the preset with the trace agent and expects OPTIMAL.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from magma_core.user_error import UserError

NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,39}")


@dataclass(frozen=True)
class Names:
    """Every name the package uses, derived from the scenario id."""

    scenario: str  # scenario id: `magma run SCENARIO.Deliver`
    package: str  # the Python package under src/
    distribution: str  # the pip name
    env_id: str  # the ManiSkill env id
    world_class: str  # the DefaultEnv subclass

    @classmethod
    def of(cls, name: str) -> Names:
        if not NAME_PATTERN.fullmatch(name) or keyword.iskeyword(name) or name.endswith("_"):
            raise UserError(
                f"scenario name {name!r}: use lowercase letters, digits and '_', starting with a "
                "letter (at most 40 characters), e.g. my_lab")
        camel = "".join(part.capitalize() for part in name.split("_") if part)
        return cls(scenario=name, package=f"{name}_scenario",
                   distribution=f"{name.replace('_', '-')}-scenario",
                   env_id=f"Magma{camel}-v1", world_class=f"{camel}World")


def write_scenario_package(name: str, folder: Path) -> list[Path]:
    """Write the package for scenario ``name`` into ``folder`` (which must not exist or be
    empty); return the files written."""
    names = Names.of(name)
    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UserError(f"{folder} exists and is not an empty folder: choose another --dir")
    files = {path.format(pkg=names.package, name=names.scenario): text
             for path, text in TEMPLATES.items()}
    written = []
    for relative, template in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_fill(template, names))
        written.append(path)
    return written


def _fill(template: str, names: Names) -> str:
    """``template`` with its ``@SCENARIO@``-style markers replaced (no str.format: the files
    hold braces of their own)."""
    for key, value in names.__dict__.items():
        template = template.replace(f"@{key.upper()}@", value)
    return template


PYPROJECT = '''\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "@DISTRIBUTION@"
version = "0.1.0"
description = "The @SCENARIO@ scenario for MAGMA"
requires-python = ">=3.11"
# MAGMA itself is not listed: install this package into the environment that has it.

# How MAGMA finds the scenario: the entry-point name is the scenario id.
[project.entry-points."magma.scenarios"]
@SCENARIO@ = "@PACKAGE@.manifest:SCENARIO"

[tool.setuptools.packages.find]
where = ["src"]

# The benchmark suite specs ship inside the package (ScenarioManifest.suites names them).
[tool.setuptools.package-data]
"*" = ["suites/*.yaml"]
'''

README = '''\
# @SCENARIO@: a MAGMA scenario

Install it into the environment that has MAGMA, then try it:

```bash
pip install -e .                                # once (or: .venv/bin/python -m pip install -e .)
magma scenarios list                            # @SCENARIO@ is listed
magma test-tools @SCENARIO@.Deliver             # call its tools by hand
magma run @SCENARIO@.Deliver --agent trace      # the reference trace: every stage OPTIMAL
magma run @SCENARIO@.Shuffle --episodes 2       # generated tasks from the definition
magma bench compile @SCENARIO@ --out suites/@SCENARIO@    # freeze its benchmark suite
magma bench run suites/@SCENARIO@ --agent trace --name trace   # run it (then: magma bench report trace)
magma export bench.trace                        # the episodes as chat fine-tuning rows
python tests/test_@SCENARIO@.py                 # its own test (or: python -m pytest tests)
```

| file | what |
| --- | --- |
| `src/@PACKAGE@/manifest.py` | the scenario id, its presets, definitions and world |
| `src/@PACKAGE@/world.py` | the layout (ids, sizes, places), without the simulator |
| `src/@PACKAGE@/env.py` | the world `@ENV_ID@` (a ManiSkill env on `DefaultEnv`) |
| `src/@PACKAGE@/tools.py` | what the robot can do: `pick`, `place`, `detect_objects` |
| `src/@PACKAGE@/stages.py` | a stage: the block on a target, then a short answer |
| `src/@PACKAGE@/presets.py` | the preset `Deliver` and its reference trace |
| `src/@PACKAGE@/definitions.py` | the definition `Shuffle`: each seed generates a task |
| `src/@PACKAGE@/suites/@SCENARIO@.yaml` | its benchmark suite (`magma bench compile @SCENARIO@`) |
| `tests/test_@SCENARIO@.py` | runs `Deliver` with the trace agent and expects OPTIMAL |
'''

MANIFEST = '''\
"""What MAGMA reads about the @SCENARIO@ scenario (without importing the simulator)."""

from magma_core.scenarios import ScenarioManifest

SCENARIO = ScenarioManifest(
    id="@SCENARIO@",  # the entry-point name in pyproject.toml must be the same
    presets={"Deliver": "@PACKAGE@.presets:Deliver"},
    definitions={"Shuffle": "@PACKAGE@.definitions:Shuffle"},
    environments={"@ENV_ID@": "@PACKAGE@.env"},  # importing the module registers the env
    suites={"@SCENARIO@": "@PACKAGE@:suites/@SCENARIO@.yaml"},  # magma bench compile @SCENARIO@
)
'''

WORLD = '''\
"""The layout of @ENV_ID@ (table frame, metres), importable without the simulator."""

ENV_ID = "@ENV_ID@"
BLOCK = "block"
BLOCK_HALF_SIZE = 0.02
BLOCK_START = (0.0, -0.1)
TARGETS = {"target_a": (0.0, 0.15), "target_b": (0.15, 0.05)}
TARGET_HALF_SIZE = (0.06, 0.06)
'''

ENV = '''\
"""The world @ENV_ID@: a Panda, a table, a block and two flat target zones.

``obs["extra"]`` holds the pose [N, 7] of ``block``, ``target_a``, ``target_b`` and ``tcp``.
"""

import torch
from mani_skill.utils.registration import register_env
from mani_skill.utils.structs.pose import Pose

from magma_core.simulation.envs import DefaultEnv
from @PACKAGE@.world import (
    BLOCK,
    BLOCK_HALF_SIZE,
    BLOCK_START,
    ENV_ID,
    TARGET_HALF_SIZE,
    TARGETS,
)


@register_env(ENV_ID, max_episode_steps=None)
class @WORLD_CLASS@(DefaultEnv):
    def _load_scene(self, options: dict) -> None:
        super()._load_scene(options)  # the table and the ground
        self.block = self.build_box(BLOCK, BLOCK_HALF_SIZE, (0.9, 0.5, 0.1, 1.0),
                                    initial_xy=BLOCK_START)
        self.targets = {name: self.build_zone(name, center_xy=xy, half_size=TARGET_HALF_SIZE)
                        for name, xy in TARGETS.items()}

    def _initialize_episode(self, env_idx: torch.Tensor, options: dict) -> None:
        super()._initialize_episode(env_idx, options)  # the robot at rest
        with torch.device(self.device):
            b = len(env_idx)  # every tensor has the slot dimension first
            xyz = torch.zeros((b, 3))
            xyz[:, 0], xyz[:, 1], xyz[:, 2] = BLOCK_START[0], BLOCK_START[1], BLOCK_HALF_SIZE
            self.block.set_pose(Pose.create_from_pq(xyz))
            for name, (x, y) in TARGETS.items():
                flat = torch.zeros((b, 3))
                flat[:, 0], flat[:, 1], flat[:, 2] = x, y, 0.001
                self.targets[name].set_pose(Pose.create_from_pq(flat))
'''

TOOLS = '''\
"""What the robot can do in @ENV_ID@."""

from magma_core.simulation.tools import BaseToolsAPI, register_tool
from magma_scenarios.common import actions
from @PACKAGE@.world import TARGET_HALF_SIZE


class @WORLD_CLASS@Tools(BaseToolsAPI):
    @register_tool(
        description="Pick up an object from the table.",
        params_spec={"object": {"description": "name of the object", "type": str,
                                "values_from": "objects"}},
    )
    def pick(self, obs, env_id, params):
        return actions.pick(obs, env_id, params, robots=self.robot_names())

    @register_tool(
        description="Place the held object in an area.",
        params_spec={"area": {"description": "name of the area", "type": str,
                              "values_from": "areas"}},
    )
    def place(self, obs, env_id, params):
        return actions.place(obs, env_id, params, robots=self.robot_names(),
                             zone_half_size=TARGET_HALF_SIZE)

    @register_tool(description="List the visible objects and where they are.", is_detection=True)
    def detect_objects(self, obs, env_id, params):
        return actions.detect(obs, env_id, params, zone_half_size=TARGET_HALF_SIZE)
'''

STAGES = '''\
"""The stages of @SCENARIO@: the block on a target, then a short answer to the user."""

from magma_core.simulation.data_structures import StageInput, UserInstruction
from magma_core.simulation.goals import At
from magma_core.simulation.stage import BaseTaskStage


class BlockOnTarget(BaseTaskStage):
    """Put the block on ``target``; the answer flag adds a completion stage (a message)."""

    def __init__(self, target: str = "target_a"):
        self.target = target
        self.target_tool_calls = 2  # pick, place: OPTIMAL at 2 calls
        self.max_tool_calls = 4  # EXCEEDED beyond 4
        super().__init__(
            goals=[At("block", target, thresh=0.06)],
            stage_goal_description=f"The block is on {target}.",
            stage_input=StageInput(UserInstruction(instruction(target)), True),
        )

    def _to_spec_arguments(self):
        return {"target": self.target}


def instruction(target: str) -> str:
    """The user's words for a target (the trace's UserEvent says the same)."""
    return f"Put the block on {target}."
'''

PRESETS = '''\
"""The presets of @SCENARIO@, each with the reference trace that solves it optimally."""

from magma_core.simulation.data_structures import SituationInit, ToolCall
from magma_core.simulation.tasks import (
    BaseTask,
    MessageEvent,
    PerfectTrace,
    ToolCallEvent,
    UserEvent,
)
from @PACKAGE@.stages import BlockOnTarget, instruction
from @PACKAGE@.tools import @WORLD_CLASS@Tools
from @PACKAGE@.world import ENV_ID


class Deliver(BaseTask):
    maniskill_env_id = ENV_ID
    Tools_cls = @WORLD_CLASS@Tools
    situation_init = SituationInit({"objects": ["block"], "areas": ["target_a", "target_b"]})
    stages = [BlockOnTarget("target_a")]

    def perfect_trace(self):
        return PerfectTrace([
            UserEvent(instruction("target_a")),  # must match the stage's instruction
            ToolCallEvent([ToolCall("pick", {"object": "block"}, "panda")]),
            ToolCallEvent([ToolCall("place", {"area": "target_a"}, "panda")]),
            MessageEvent("The block is on target_a."),  # the completion stage's answer
        ])
'''

DEFINITIONS = '''\
"""The definition Shuffle: each episode's seed generates a task of moves of the block."""

from magma_core.simulation.data_structures import SituationInit, ToolCall
from magma_core.simulation.tasks import (
    BaseRequest,
    MessageEvent,
    TaskDefinition,
    ToolCallEvent,
    UserEvent,
)
from @PACKAGE@.stages import BlockOnTarget, instruction
from @PACKAGE@.tools import @WORLD_CLASS@Tools
from @PACKAGE@.world import ENV_ID


class MoveBlock(BaseRequest):
    """The user asks for the block on the target where it is not."""

    def sample_parameters(self, state, rng):
        here = state.relations["object_area"].get("block")
        return {"target": rng.choice([a for a in state.attributes["areas"] if a != here])}

    def create_stages(self, state, params):
        return [BlockOnTarget(params["target"])]

    def perfect_trace(self, state, params):
        target = params["target"]
        return [
            UserEvent(instruction(target)),
            ToolCallEvent([ToolCall("pick", {"object": "block"})]),
            ToolCallEvent([ToolCall("place", {"area": target})]),
            MessageEvent(f"The block is on {target}."),
        ]

    def apply_request(self, state, params):
        state.relations["object_area"]["block"] = params["target"]
        return state


class Shuffle(TaskDefinition):
    maniskill_env_id = ENV_ID
    Tools_cls = @WORLD_CLASS@Tools
    situation_init = SituationInit({"objects": ["block"], "areas": ["target_a", "target_b"]})
    active_requests = [MoveBlock()]
    max_target_tool_calls = 4  # two moves
'''

SUITE = '''\
# The benchmark suite of @SCENARIO@: magma bench compile @SCENARIO@ --out suites/@SCENARIO@
name: @SCENARIO@
description: Deliver and two generated Shuffle tasks, as written and in other words.
# clean and paraphrase need no condition transforms; execution_error, interruption,
# mission_update and combined need a transforms module (the benchmarking guide says how).
conditions: [clean, paraphrase]
skeletons:
  - {preset: @SCENARIO@.Deliver}
  - {definition: @SCENARIO@.Shuffle, seeds: 2}
'''

TEST = '''\
"""The @SCENARIO@ scenario is installed, and its reference trace solves Deliver OPTIMALLY.

Run it with pytest, or without it (the environment ``make demo`` makes has no pytest):
``python tests/test_@SCENARIO@.py``.
"""

import sys
import tempfile
from pathlib import Path

from magma_core.runs import RunSpec, run
from magma_core.scenarios import get_scenario


def test_the_scenario_is_installed():
    assert "Deliver" in get_scenario("@SCENARIO@").presets


def test_the_trace_solves_deliver_optimally(tmp_path):
    result = run(RunSpec("@SCENARIO@.Deliver", agent="trace", out=tmp_path))
    (episode,) = result.summaries
    assert episode.status == "success", episode.reason
    assert episode.optimal == episode.stages_total


if __name__ == "__main__":  # without pytest: run each test, say which passed
    test_the_scenario_is_installed()
    with tempfile.TemporaryDirectory() as folder:
        test_the_trace_solves_deliver_optimally(Path(folder))
    print("2 tests passed", file=sys.stderr)
'''

TEMPLATES = {
    "pyproject.toml": PYPROJECT,
    "README.md": README,
    "src/{pkg}/__init__.py": '"""The @SCENARIO@ scenario for MAGMA."""\n',
    "src/{pkg}/manifest.py": MANIFEST,
    "src/{pkg}/world.py": WORLD,
    "src/{pkg}/env.py": ENV,
    "src/{pkg}/tools.py": TOOLS,
    "src/{pkg}/stages.py": STAGES,
    "src/{pkg}/presets.py": PRESETS,
    "src/{pkg}/definitions.py": DEFINITIONS,
    "src/{pkg}/suites/{name}.yaml": SUITE,
    "tests/test_{name}.py": TEST,
}
