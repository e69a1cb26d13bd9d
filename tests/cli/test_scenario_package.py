"""A user's scenario package, installed in the test environment, plugs in by entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import magma

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
#: The guide's example package (docs/guides/first-scenario.md includes its files) and a
#: test-only package whose preset has a tool that raises in slot 1.
PACKAGES = [ROOT / "examples" / "my_magma_scenarios",
            ROOT / "tests" / "fixtures" / "buggy_magma_scenarios"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    target = tmp_path_factory.mktemp("site")
    build = tmp_path_factory.mktemp("build")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), *map(str, PACKAGES)],
        check=True, capture_output=True, text=True, cwd=build,
    )
    assert list(target.glob("my_magma_scenarios-*.dist-info"))
    assert list(target.glob("buggy_magma_scenarios-*.dist-info"))
    return {"PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")])}


def test_installed_package_is_listed_and_runs(installed, tmp_path):
    listing = magma("scenarios", "list", cwd=tmp_path, env=installed)
    assert listing.returncode == 0, listing.stderr
    assert "my_cubes" in listing.stdout and "cube" in listing.stdout
    run = magma("run", "my_cubes.SwitchAndPlace", "--episodes", "2", "--slots", "2",
                "--out", "out", cwd=tmp_path, env=installed)
    assert run.returncode == 0, run.stdout + run.stderr
    totals = json.loads((tmp_path / "out" / "my_cubes.SwitchAndPlace.summary.json").read_text())["totals"]
    assert totals["success"] == 2 and totals["optimal"] == totals["stages_total"] == 4


def test_without_the_package_the_preset_is_unknown(tmp_path):
    proc = magma("run", "my_cubes.SwitchAndPlace", cwd=tmp_path)
    assert proc.returncode == 2 and "unknown scenario 'my_cubes'" in proc.stderr


def test_a_scenario_bug_ends_only_its_episode_and_the_exit_status_says_so(installed, tmp_path):
    run = magma("run", "buggy_cubes.Buggy", "--episodes", "2", "--slots", "2", "--out", "out",
                cwd=tmp_path, env=installed)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    summary = json.loads((tmp_path / "out" / "buggy_cubes.Buggy.summary.json").read_text())
    statuses = {e["episode"]: e["status"] for e in summary["episodes"]}
    assert statuses == {0: "success", 1: "error"}
    record = json.loads(magma("runs", "show", "buggy_cubes.Buggy", "--out", "out", "--episode", "1",
                              cwd=tmp_path, env=installed).stdout)
    assert "RuntimeError: scenario bug in slot 1" in record["traceback"]


def test_a_wrong_state_update_path_says_why_where_people_look(installed, tmp_path):
    """The reason of an error episode is in ``magma run``'s output with the command that
    prints its traceback; that command and ``test-tools`` print the traceback itself."""
    run = magma("run", "buggy_cubes.WrongPath", "--out", "out", cwd=tmp_path, env=installed)
    assert run.returncode == 1, run.stdout + run.stderr
    flat = " ".join(run.stdout.split())  # rich may wrap long lines
    reason = "KeyError while applying the state updates of switch_machine"
    assert flat.count(reason) == 2  # the live line and under the table
    command = "magma runs show buggy_cubes.WrongPath --episode 0 --traceback --out out"
    assert command in flat
    shown = magma(*command.split()[1:], cwd=tmp_path, env=installed)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("episode 0: error\nreason: " + reason)
    assert "Traceback (most recent call last)" in shown.stdout and "machine_onn" in shown.stdout
    tester = magma("test-tools", "buggy_cubes.WrongPath", cwd=tmp_path, env=installed,
                   stdin="switch_machine(on=True)\nexit\n")
    assert tester.returncode == 0, tester.stdout + tester.stderr
    assert "[slot 0] finished task: error" in tester.stdout
    assert f"[slot 0] reason: {reason}" in tester.stdout
    assert "[slot 0] traceback:\nTraceback (most recent call last)" in tester.stdout


def test_a_trace_typo_says_which_call_failed_and_why_in_the_run_output(installed, tmp_path):
    """A misspelt argument in the reference trace: the episode ends trace_exhausted, and the
    why line (live and under the table) names the failed call and its reason."""
    run = magma("run", "buggy_cubes.TraceTypo", "--out", "out", cwd=tmp_path, env=installed)
    assert run.returncode == 0, run.stdout + run.stderr  # not a scenario error: exit 0
    flat = " ".join(run.stdout.split())  # rich may wrap long lines
    assert "[trace_exhausted]" in flat
    failed = ("1 failed call: panda.place(aera='zone_a'): Unknown arguments: aera. "
              "Missing arguments: area.")
    assert flat.count(failed) == 2, flat  # the live line and under the table


def test_a_trace_whose_user_text_differs_from_the_instruction_is_warned_about(installed, tmp_path):
    run = magma("run", "buggy_cubes.WrongWords", "--out", "out", cwd=tmp_path, env=installed)
    assert run.returncode == 0, run.stdout + run.stderr
    said = " ".join((run.stdout + run.stderr).split())
    assert "perfect trace: UserEvent 0 says 'Switch on the machine.'" in said, said
    assert "but stage 1 instructs 'Switch the machine on.'" in said, said  # stages count from 1


def test_a_goal_that_ignores_the_slots_is_refused_with_its_name(installed, tmp_path):
    """A goal returning one score whatever the observation looks right on one slot; with
    --slots 2 every episode is an error whose reason names the goal and the shape."""
    run = magma("run", "buggy_cubes.OneScoreGoal", "--episodes", "2", "--slots", "2",
                "--out", "out", cwd=tmp_path, env=installed)
    assert run.returncode == 1, run.stdout + run.stderr
    flat = " ".join(run.stdout.split())
    reason = ("OneScore.verify returned a tensor of shape (1,) for an observation of 2 slots; "
              "expected an int tensor of length 2 with -1/0/1")
    assert flat.count(reason) == 4, flat  # two episodes, each live and under the table
    one = magma("run", "buggy_cubes.OneScoreGoal", "--out", "one", cwd=tmp_path, env=installed)
    assert one.returncode == 0, one.stdout + one.stderr  # on one slot it is right


def test_a_manifest_env_id_that_is_not_registered_is_one_line_naming_it(installed, tmp_path):
    run = magma("run", "buggy_envs.Buggy", "--out", "out", cwd=tmp_path, env=installed)
    assert run.returncode == 2, run.stdout + run.stderr
    line = run.stderr.strip().splitlines()[-1]
    assert line.startswith("magma: error: scenario manifest buggy_envs (buggy-magma-scenarios")
    assert ("environments key 'MagmaCubes-v1' is not an env id that importing "
            "magma_scenarios.cube.env registers; did you mean 'MagmaCube-v1'?") in line


def test_the_tutorial_definition_generates_and_runs_randomized(installed, tmp_path):
    chains = magma("scenarios", "test-requests", "my_cubes.Shuffle", "--seeds", "2",
                   cwd=tmp_path, env=installed)
    assert chains.returncode == 0, chains.stderr
    assert "seed 0: 8 stages" in chains.stdout and "seed 1: 8 stages" in chains.stdout
    run = magma("run", "my_cubes.Shuffle", "--episodes", "2", "--slots", "2", "--randomized",
                "--out", "out", cwd=tmp_path, env=installed)
    assert run.returncode == 0, run.stdout + run.stderr
    totals = json.loads((tmp_path / "out" / "my_cubes.Shuffle.summary.json").read_text())["totals"]
    assert totals["success"] == 2 and totals["optimal"] == totals["stages_total"] == 16
    record = json.loads(magma("runs", "show", "my_cubes.Shuffle", "--out", "out", "--episode", "0",
                              cwd=tmp_path, env=installed).stdout)
    public = record["randomization"]["attributes_equivalence"]
    assert set(public) == {"zone_a", "zone_b"} and public["zone_a"] in ("left_tray", "dock_1")
