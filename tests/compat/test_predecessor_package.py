"""A scenario package written from the predecessor's (MAGMA 2.0) documented authoring
surface, installed by entry point, runs OPTIMAL with its trace through ``magma run``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli.conftest import magma

pytestmark = pytest.mark.sim

PACKAGE = Path(__file__).resolve().parents[1] / "fixtures" / "magma2_style_scenarios"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    target = tmp_path_factory.mktemp("site")
    build = tmp_path_factory.mktemp("build")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(PACKAGE)],
        check=True, capture_output=True, text=True, cwd=build,
    )
    assert list(target.glob("magma2_style_scenarios-*.dist-info"))
    return {"PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.parametrize("preset, stages", [("FirstTask", 4), ("TwoArms", 1)])
def test_the_predecessor_style_package_runs_optimal(installed, tmp_path, preset, stages):
    run = magma("run", f"magma2_style.{preset}", "--agent", "trace", "--episodes", "2",
                "--slots", "2", "--out", "out", cwd=tmp_path, env=installed)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "agent_names=['default'] replaced by the world's robot names" in run.stderr
    summary = json.loads((tmp_path / "out" / f"magma2_style.{preset}.summary.json").read_text())
    totals = summary["totals"]
    assert totals["success"] == 2
    assert totals["optimal"] == totals["stages_total"] == 2 * stages
    if preset == "FirstTask":  # the injected one-shot failure was forgiven, not counted
        record = json.loads(magma("runs", "show", f"magma2_style.{preset}", "--out", "out",
                                  "--episode", "0", cwd=tmp_path, env=installed).stdout)
        first = record["steps"][0]["calls"][0]
        assert first["failure_flag"] == "injection_error" and first["forgiven"]
        assert record["attributes"]["areas"] == ["zone_a", "bin", "zone_c"]


def test_the_predecessor_style_definition_runs_optimal_with_constructor_arguments(installed, tmp_path):
    """Requests with ``sample_parameters(state)`` and ``build_perfect_trace``, the templates
    (``MissingInformationStage``, ``GiveObjectAssignmentRequest``) and ``--NAME VALUE``
    constructor arguments, through ``magma run`` with the trace agent."""
    run = magma("run", "magma2_style.CubeErrands", "--agent", "trace", "--episodes", "3",
                "--slots", "3", "--out", "out", "--max-stages", "4", "--ask-first", "true",
                cwd=tmp_path, env=installed)
    assert run.returncode == 0, run.stdout + run.stderr
    summary = json.loads((tmp_path / "out" / "magma2_style.CubeErrands.summary.json").read_text())
    assert summary["config"]["target_args"] == {"max_stages": 4, "ask_first": True}
    totals = summary["totals"]
    assert totals["success"] == 3 and totals["optimal"] == totals["stages_total"] <= 3 * 4
    wrong = magma("run", "magma2_style.CubeErrands", "--max-stage", "4", "--out", "out",
                  cwd=tmp_path, env=installed)
    assert wrong.returncode == 2
    assert "takes no constructor argument 'max_stage' (accepted: --max-stages, --ask-first)" in wrong.stderr
