"""``magma new scenario NAME``: the package it writes installs, lists, passes its own test and
runs OPTIMAL with the trace agent; names are derived from NAME; bad names are one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from magma_core.cli.scaffold import Names, write_scenario_package
from magma_core.user_error import UserError

from .conftest import magma


def test_every_name_is_derived_from_the_scenario_id(tmp_path):
    names = Names.of("my_lab")
    assert (names.package, names.distribution, names.env_id) == (
        "my_lab_scenario", "my-lab-scenario", "MagmaMyLab-v1")
    files = write_scenario_package("my_lab", tmp_path / "pkg")
    text = {p.relative_to(tmp_path / "pkg").as_posix(): p.read_text() for p in files}
    assert "src/my_lab_scenario/manifest.py" in text and "tests/test_my_lab.py" in text
    assert 'my_lab = "my_lab_scenario.manifest:SCENARIO"' in text["pyproject.toml"]
    assert "MessageEvent(" in text["src/my_lab_scenario/presets.py"]
    assert not any("@" + "SCENARIO@" in t or "@PACKAGE@" in t for t in text.values())
    for path, source in text.items():
        if path.endswith(".py"):
            compile(source, path, "exec")


@pytest.mark.parametrize("name", ["9lab", "My_Lab", "lab-1", "class", "lab_", "x" * 41])
def test_a_bad_name_is_refused(name):
    with pytest.raises(UserError, match="lowercase letters"):
        Names.of(name)


def test_the_command_refuses_bad_names_and_full_folders_in_one_line(tmp_path):
    bad = magma("new", "scenario", "Lab", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "lowercase" in bad.stderr
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "keep.txt").write_text("mine")
    full = magma("new", "scenario", "lab", cwd=tmp_path)
    assert full.returncode == 2 and "not an empty folder" in full.stderr
    assert (tmp_path / "lab" / "keep.txt").read_text() == "mine"


@pytest.mark.sim
def test_the_scaffold_installs_passes_its_test_and_runs_optimal(tmp_path):
    made = magma("new", "scenario", "bench_lab", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "-m pip install -e bench_lab" in made.stdout
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--target", str(site), str(tmp_path / "bench_lab")],
                   check=True, capture_output=True, text=True, cwd=tmp_path)
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    listed = magma("scenarios", "list", cwd=tmp_path, env=env)
    assert listed.returncode == 0 and "bench_lab" in listed.stdout, listed.stderr
    own = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p",
                          "no:cacheprovider", "-n", "0", "tests"],
                         cwd=tmp_path / "bench_lab", capture_output=True, text=True,
                         env={**os.environ, **env}, timeout=300)
    assert own.returncode == 0 and "2 passed" in own.stdout, own.stdout + own.stderr
    run = magma("run", "bench_lab.Deliver", "--agent", "trace", "--out", "out",
                cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    totals = json.loads(Path(tmp_path / "out" / "bench_lab.Deliver.summary.json").read_text())["totals"]
    assert totals["success"] == 1 and totals["optimal"] == totals["stages_total"] == 2
