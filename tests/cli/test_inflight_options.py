"""``magma run``'s pacing options: parsed into the RunSpec; bad values are one line, status 2."""

from __future__ import annotations

import pytest

from magma_core.cli import build_parser
from magma_core.cli.run import spec_from_args
from magma_core.runs import Pacing


def test_pacing_options_reach_the_run_spec():
    args = build_parser().parse_args(
        ["run", "cube.PickPlace", "--concurrency", "3", "--batch-window", "0.05",
         "--agent-timeout", "7.5", "--schedule", "lockstep"])
    spec = spec_from_args(args)
    assert spec.pacing == Pacing(concurrency=3, batch_window=0.05, lockstep=True)
    assert spec.agent_timeout == 7.5
    assert spec.config()["pacing"]["concurrency"] == 3
    default = spec_from_args(build_parser().parse_args(["run", "cube.PickPlace"]))
    assert default.pacing == Pacing() and "pacing" not in default.config()


@pytest.mark.parametrize("option, value", [
    ("--concurrency", "0"), ("--batch-window", "-1"), ("--agent-timeout", "0"),
    ("--agent-timeout", "nan"), ("--agent-timeout", "inf"), ("--schedule", "chaos"),
])
def test_bad_pacing_options_are_one_line_and_status_2(option, value, capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["run", "cube.PickPlace", option, value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) >= 1 and err[-1].startswith("magma: error:") and option in err[-1]
