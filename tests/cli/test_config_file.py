"""``--config FILE`` (YAML or TOML) on ``magma run``, ``magma gen`` and ``magma bench run``:
the file holds what the flags hold, its command section overrides its top level, flags win."""

from __future__ import annotations

import json
import sqlite3

import pytest

from cli.conftest import magma
from magma_core.cli import build_parser
from magma_core.cli.config_file import ConfigFileError, expand_config


def parse(argv: list[str]):
    parser = build_parser()
    return parser.parse_args(expand_config(parser, argv))


def test_yaml_options_with_a_command_section_and_flags_over_them(tmp_path):
    path = tmp_path / "magma.yaml"
    path.write_text("agent: noisy-trace:0.5\nbranches: 3\nmax_nodes: 40\nrandomized: true\n"
                    "extra-body: {min_p: 0.05}\ntemperature: 0.7\n"
                    "gen:\n  branches: 4\n  trees: 2\nrun:\n  episodes: 9\n")
    args = parse(["gen", "cube.PickPlace", "--config", str(path), "--max-nodes", "12"])
    assert (args.agent, args.branches, args.trees, args.max_nodes) == ("noisy-trace:0.5", 4, 2, 12)
    assert args.randomized is True and args.extra_body == {"min_p": 0.05} and args.temperature == 0.7
    run = parse(["run", "cube.PickPlace", "--config", str(path), "--temperature", "0.1"])
    assert run.episodes == 9 and run.temperature == 0.1  # the run: section; the flag wins


def test_toml_on_bench_run_and_a_list_flag(tmp_path):
    path = tmp_path / "bench.toml"
    path.write_text('agent = "trace"\ntrials = 3\n[bench]\nslots = 2\nray = true\n')
    args = parse(["bench", "run", "suite", "--config", str(path)])
    assert (args.agent, args.trials, args.slots, args.ray) == ("trace", 3, 2, "local")
    path.write_text('skills = ["pick", "place"]\n')
    args = parse(["run", "cube.PickPlace", "--config", str(path)])
    assert args.preset == "cube.PickPlace" and getattr(args, "skills", None) == ["pick", "place"]


@pytest.mark.parametrize("text, message", [
    ("bogus: 1\n", "magma gen has no option 'bogus' (it takes agent, agent-config"),
    ("branches: 0\n", "branches: expected a positive integer, got '0'"),
    ("backend: tpu\n", "backend: 'tpu' is not one of auto, cpu, gpu"),
    ("randomized: maybe\n", "randomized is a switch, give true or false"),
    ("seed: [1, 2]\n", "seed takes one value, not a list"),
    ("- just\n- a list\n", "must be a mapping of option names to values"),
    ("a: [unclosed\n", "is not valid YAML"),
])
def test_a_bad_file_is_one_line_naming_it(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigFileError, match=f"config {path}") as caught:
        parse(["gen", "cube.PickPlace", "--config", str(path)])
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_command_says_so_and_a_missing_file_too(workdir):
    done = magma("gen", "cube.PickPlace", "--config", "missing.yaml", cwd=workdir)
    assert done.returncode == 2 and done.stderr.startswith("magma: error: cannot read config missing.yaml")
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.sim
def test_a_run_takes_its_options_from_the_file(workdir):
    (workdir / "run.yaml").write_text("agent: trace\nout: st\nrun:\n  episodes: 2\n  name: fromfile\n  seed: 5\n")
    done = magma("run", "cube.PickPlace", "--config", "run.yaml", "--seed", "7", cwd=workdir)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(workdir / "st" / "magma.db") as db:
        config = json.loads(db.execute("SELECT config FROM runs WHERE name = 'fromfile'").fetchone()[0])
    assert (config["episodes"], config["seed"], config["agent"]) == (2, 7, "trace")
