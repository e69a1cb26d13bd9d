"""The newcomer's path, every step through the CLI as the first-scenario guide walks it:
``magma new scenario``, the printed next steps as printed (no pytest needed), a stage with
a rule-based scorer, the package's own suite compiled by name (with a folder of that name
here), run with the trace agent without any judge, and exported without duplicates; then a
condition of one's own (the benchmarking guide's transforms module)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli.conftest import magma

ROOT = Path(__file__).resolve().parents[2]
NAME = "pantry_lab"

#: the guide's new stage: a question the scorer checks, appended to Deliver
STAGE_EDIT = (
    '    stages = [BlockOnTarget("target_a")]\n',
    '    stages = [BlockOnTarget("target_a"),\n'
    '              ScoredQuestionStage("How many targets are there?", OneOf(["two", "2"]))]\n',
)
TRACE_EDIT = (
    '            MessageEvent("The block is on target_a."),  # the completion stage\'s answer\n',
    '            MessageEvent("The block is on target_a."),  # the completion stage\'s answer\n'
    '            UserEvent("How many targets are there?"),\n'
    '            MessageEvent("Two."),  # what the scorer checks\n',
)
IMPORT_EDIT = (
    "from @PKG@.stages import BlockOnTarget, instruction\n",
    "from magma_core.simulation.stage import ScoredQuestionStage\n"
    "from magma_core.simulation.stage.scorers import OneOf\n"
    "from @PKG@.stages import BlockOnTarget, instruction\n",
)


def _edit(path: Path, *edits: tuple[str, str]) -> None:
    text = path.read_text()
    for old, new in edits:
        old, new = old.replace("@PKG@", f"{NAME}_scenario"), new.replace("@PKG@", f"{NAME}_scenario")
        assert old in text, f"{path.name} no longer holds {old!r}"
        text = text.replace(old, new)
    path.write_text(text)


def _printed_steps(stdout: str) -> list[list[str]]:
    """The printed next steps, each as the arguments of a command this test can run: the
    interpreter's lines as they are, ``magma`` lines (this environment's own command, which
    they must name) through the same interpreter."""
    steps = []
    for line in stdout.splitlines():
        if not line.startswith("  "):
            continue
        words = shlex.split(line)
        if words[0] == sys.executable:
            steps.append(words)
        else:
            assert words[0] in ("magma", str(Path(sys.executable).with_name("magma"))), line
            steps.append([sys.executable, "-m", "magma_core.cli", *words[1:]])
    return steps


@pytest.mark.sim
def test_a_newcomer_reaches_their_own_scenario_benchmarked_and_exported(tmp_path):
    made = magma("new", "scenario", NAME, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    steps = _printed_steps(made.stdout)
    assert [s[2:4] if s[1] == "-m" else s[1:2] for s in steps][:3] == [
        ["pip", "install"], ["magma_core.cli", "run"], [f"{NAME}/tests/test_{NAME}.py"]]
    package = tmp_path / NAME
    src = package / "src" / f"{NAME}_scenario"
    _edit(src / "presets.py", IMPORT_EDIT, STAGE_EDIT, TRACE_EDIT)
    site = tmp_path / "site"  # pip install -e, offline: the same files on the path
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(package)], check=True, capture_output=True, cwd=tmp_path)
    env = {**os.environ, "COLUMNS": "200",
           "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}

    def run(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), cwd=tmp_path, capture_output=True, text=True, env=env,
                              timeout=timeout)

    blocker = tmp_path / "no_pytest"  # the demo venv has no pytest: make importing it fail
    blocker.mkdir()
    (blocker / "pytest.py").write_text("raise ImportError('no pytest in the demo venv')\n")
    env["PYTHONPATH"] = os.pathsep.join([str(blocker), env["PYTHONPATH"]])
    outputs = {}
    for step in steps[1:]:  # the printed steps after the install, verbatim
        done = run(*step)
        assert done.returncode == 0, f"{shlex.join(step)}\n{done.stdout}{done.stderr}"
        outputs[shlex.join(step)] = done
    (test_step,) = [v for k, v in outputs.items() if k.endswith(f"test_{NAME}.py")]
    assert "2 tests passed" in test_step.stderr
    (bench_step,) = [v for k, v in outputs.items() if " bench run " in k]
    assert bench_step.stderr.count(": success") == 6, bench_step.stderr  # no --judge: the scorer decides
    # ./pantry_lab (the package folder) is here: the suite name still resolves as a name
    assert (tmp_path / NAME).is_dir() and (tmp_path / "suites" / NAME / "manifest.json").exists()
    suite = json.loads((tmp_path / "suites" / NAME / "index.json").read_text())
    assert sorted({i["condition"] for i in suite["items"]}) == ["clean", "paraphrase"]
    assert len(suite["items"]) == 6  # Deliver and two Shuffle seeds, clean and in other words

    listed = run(sys.executable, "-m", "magma_core.cli", "runs", "list")
    assert listed.returncode == 0 and "bench.trace" in listed.stdout, listed.stdout + listed.stderr
    exported = run(sys.executable, "-m", "magma_core.cli", "export", "bench.trace", "--validation-ratio", "0")
    assert exported.returncode == 0, exported.stdout + exported.stderr
    rows = [json.loads(line) for line in
            (tmp_path / "runs" / "exports" / "bench.trace-chat-jsonl" / "chat_train.jsonl").read_text().splitlines()]
    dropped = re.search(r"dropped (\d+) duplicate", exported.stderr)
    assert len(rows) + (int(dropped.group(1)) if dropped else 0) == 6  # one row per trial, no repeats
    assert len({json.dumps(r["messages"]) for r in rows}) == len(rows)
    scored = [r for r in rows if any("how many targets are there?" in str(m.get("content")).lower()
                                     for m in r["messages"])]
    assert len(scored) == 2 and all(r["messages"][-1]["content"] == "Two." for r in scored)  # clean, paraphrased

    # a condition of one's own: the benchmarking guide's transforms module
    shutil.copy(ROOT / "examples" / "newcomer" / "bench_conditions.py", site / f"{NAME}_scenario")
    spec = tmp_path / "mine.yaml"
    spec.write_text(f"transforms: {NAME}_scenario.bench_conditions\nconditions: [clean, interruption]\n"
                    f"skeletons:\n  - {{preset: {NAME}.Deliver}}\n")
    compiled = run(sys.executable, "-m", "magma_core.cli", "bench", "compile", "./mine.yaml", "--out", "mine")
    assert compiled.returncode == 0, compiled.stderr
    ran = run(sys.executable, "-m", "magma_core.cli", "bench", "run", "mine", "--agent", "trace", "--name", "mine")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stderr.count(": success") == 2, ran.stderr
