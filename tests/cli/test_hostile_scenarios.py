"""A hostile scenario package (tests/fixtures/hostile_magma_scenarios) through run, bench and
gen: a reset raising for one seed, entry transitions returning state of the wrong shape,
dtype or NaN, a state update carrying NaN and an extra-state hook reporting NaN each end only
their episode, as an ``error`` with a reason naming the stage and hook and its traceback;
every other episode completes and the command exits 1 with a summary line."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from magma_core.store import open_store

from .conftest import magma

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [ROOT / "examples" / "my_magma_scenarios",
            ROOT / "tests" / "fixtures" / "hostile_magma_scenarios"]
PRESET = "hostile_cubes.Hostile"
#: seed -> what the error's reason must say (see the fixture's ``faults`` module)
REASONS = {
    1: "RuntimeError while resetting the world with seed 1: hostile reset for seed 1",
    2: "while applying the entry transition of stage 1 (HostileCubeBackStage): the entry "
       "transition of stage 1 returned actors/cube of shape [7,13], expected [2,13]",
    3: "while applying the state updates of switch_machine: value for ('magma_extra_state', "
       "'machine_on') holds non-finite numbers",
    4: "while reading the world state (get_state_dict, get_magma_extra_state): "
       "get_magma_extra_state returned non-finite values in magma_extra_state/temperature",
    5: "the entry transition of stage 1 returned actors/cube of dtype torch.int64, expected "
       "torch.float32",
    6: "the entry transition of stage 1 returned actors/cube with non-finite values (nan)",
}
CLEAN = {0, 7}


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), *map(str, PACKAGES)],
        check=True, capture_output=True, text=True, cwd=tmp_path_factory.mktemp("build"),
    )
    return {"PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")])}


def _check_records(out: Path, run_name: str, statuses: dict[int, str]) -> None:
    assert {e for e, s in statuses.items() if s == "success"} == CLEAN, statuses
    assert {e for e, s in statuses.items() if s == "error"} == set(REASONS), statuses
    with open_store(out, create=False) as store:
        for episode, reason in REASONS.items():
            record = store.episode_record(run_name, episode)
            assert reason in record["reason"], (episode, record["reason"])
            assert "Traceback (most recent call last)" in record["traceback"]


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_run_keeps_every_fault_in_its_episode(installed, tmp_path, workers):
    proc = magma("run", PRESET, "--episodes", "8", "--slots", "2", "--workers", str(workers),
                 "--out", "out", cwd=tmp_path, env=installed)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "6 of 8 episodes hit a scenario error (episodes 1, 2, 3, 4, 5, 6)" in proc.stderr
    summary = json.loads((tmp_path / "out" / f"{PRESET}.summary.json").read_text())
    _check_records(tmp_path / "out", PRESET,
                   {e["episode"]: e["status"] for e in summary["episodes"]})
    again = magma("run", PRESET, "--episodes", "8", "--slots", "2", "--out", "out",
                  cwd=tmp_path, env=installed)  # nothing left to run: the same exit status
    assert again.returncode == 1 and "6 of 8 episodes" in again.stderr


def test_bench_keeps_every_fault_in_its_trial(installed, tmp_path):
    (tmp_path / "hostile.yaml").write_text(
        "name: hostile\nconditions: [clean]\n"
        "transforms: magma_scenarios.sorting.bench_conditions\n"
        f"skeletons:\n  - {{preset: {PRESET}, track: in_domain}}\n")
    compiled = magma("bench", "compile", "hostile.yaml", "--out", "suite", cwd=tmp_path,
                     env=installed)
    assert compiled.returncode == 0, compiled.stderr
    proc = magma("bench", "run", "suite", "--trials", "8", "--slots", "2", "--out", "out",
                 "--name", "h", cwd=tmp_path, env=installed)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "6 trial(s) of h hit a scenario error" in proc.stderr
    with open_store(tmp_path / "out", create=False) as store:
        statuses = {s.episode: s.status for s in store.episodes("bench.h")}
    _check_records(tmp_path / "out", "bench.h", statuses)


def test_gen_keeps_every_fault_in_its_candidate(installed, tmp_path):
    proc = magma("gen", PRESET, "--agent", "trace", "--branches", "1", "--trees", "8",
                 "--slots", "2", "--out", "out", cwd=tmp_path, env=installed)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "6 candidate(s) of 'gen-hostile_cubes.Hostile' hit a scenario error" in proc.stderr
    conn = sqlite3.connect(tmp_path / "out" / "magma.db")
    rows = conn.execute("SELECT tree, episode_status, execution FROM gen_candidates").fetchall()
    errors = {tree: json.loads(execution) for tree, status, execution in rows if status == "error"}
    assert set(errors) == set(REASONS)
    for tree, reason in REASONS.items():
        assert reason in errors[tree]["reason"]
        assert "Traceback (most recent call last)" in errors[tree]["traceback"]
    successes = {tree for tree, status, _ in rows if status == "success"}
    assert successes == CLEAN
