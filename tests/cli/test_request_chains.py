"""``magma scenarios test-requests``: request chains and coverage of a definition."""

from __future__ import annotations

import re

from magma_core.cli import main
from magma_scenarios.sorting.definitions import LongSorting, LongSortingJudged

from .conftest import magma


def test_trace_mode_prints_each_seeds_chain(capsys):
    assert main(["scenarios", "test-requests", "sorting.LongSorting", "--seeds", "2",
                 "--seed", "5"]) == 0
    out = capsys.readouterr().out
    for seed in (5, 6):
        task = LongSorting().generate(seed)
        assert f"seed {seed}: {len(task.stages)} stages" in out
        for record in task.requests:
            assert record.description in out
    assert "seed 7" not in out


def test_mass_mode_prints_coverage_and_stage_counts(capsys):
    assert main(["scenarios", "test-requests", "sorting.LongSortingJudged", "--mode", "mass",
                 "--seeds", "50", "--max-target-tool-calls", "20"]) == 0
    out = capsys.readouterr().out
    for kind in ("SortCube", "SortColourFamily", "ClearZone", "ForbidRule", "TableQuestion",
                 "ChangeTarget"):
        assert kind in out
    lengths = [len(LongSortingJudged().generate(s, max_target_tool_calls=20).stages) for s in range(50)]
    assert re.search(rf"min {min(lengths)}, mean [\d.]+, max {max(lengths)}", out)


def test_bad_input_is_one_line_and_nonzero(workdir):
    proc = magma("scenarios", "test-requests", "sorting.SortAll", cwd=workdir)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("magma: error: scenario 'sorting' has no definition 'SortAll' "
                                   "(definitions: LongSorting, LongSortingJudged, LongSortingTrain, PairSortingHeldOut, "
                                   "PairSortingTrain, PerturbedPairSortingTrain, RuleSorting, ShortSorting, "
                                   "ShortSortingCompositional, ShortSortingTrain)")
    proc = magma("scenarios", "test-requests", "sorting.LongSorting", "--mode", "fast", cwd=workdir)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    proc = magma("scenarios", "show", "sorting", cwd=workdir)
    assert "sorting.LongSorting" in proc.stdout
