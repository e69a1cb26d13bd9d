"""benchmarks/data_value.py's figures: the exact McNemar test on paired outcomes, the call
figures of stored steps and the before/after table (pure functions; no model, no simulator)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import data_value  # noqa: E402
from magma_core.bench.stats import rate  # noqa: E402


def outcomes(pattern: str) -> dict:
    return {(f"item{i}", 0): c == "1" for i, c in enumerate(pattern)}


@pytest.mark.parametrize(("before", "after", "gained", "lost", "p"), [
    ("000000", "111111", 6, 0, 2 / 64),           # 6 discordant pairs, all one way: p = 2 * 0.5^6
    ("00000", "11111", 5, 0, 2 / 32),             # 5 are not enough for p < 0.05
    ("0001", "1110", 3, 1, 2 * (1 + 4) / 16),     # two-sided binomial tail
    ("0101", "0101", 0, 0, 1.0),                  # no discordant pair
    ("10", "01", 1, 1, 1.0),                      # capped at 1
])
def test_mcnemar_exact(before, after, gained, lost, p):
    test = data_value.mcnemar_exact(outcomes(before), outcomes(after))
    assert (test["gained"], test["lost"], test["pairs"]) == (gained, lost, len(before))
    assert test["p"] == pytest.approx(p)


def test_mcnemar_pairs_only_the_keys_both_runs_have():
    test = data_value.mcnemar_exact({("a", 0): False, ("b", 0): False}, {("a", 0): True})
    assert test == {"pairs": 1, "gained": 1, "lost": 0, "p": 1.0}


def test_call_figures_count_written_and_refused_calls():
    steps = [
        {"decision": {"tool_calls": [{"name": "pick"}]}, "calls": [{"failure_flag": "none"}]},
        {"decision": {"tool_calls": [{"name": "plaec"}]}, "calls": [{"failure_flag": "bad_call"}]},
        {"decision": {"say": "done", "tool_calls": []}, "calls": []},
        {"decision": {"say": "code", "tool_calls": []}, "calls": []},
    ]
    figures = data_value.call_figures(steps, waited=10.0)
    assert figures["decisions"] == 4 and figures["calls_written"] == 2 and figures["valid_calls"] == 1
    assert figures["calls_per_decision"] == 0.5 and figures["valid_call_rate"] == 0.5
    assert figures["valid_calls_per_decision"] == 0.25 and figures["s_per_decision"] == 2.5
    assert data_value.call_figures([], 0.0)["valid_call_rate"] == 0.0


def test_the_table_shows_both_runs_and_the_paired_test():
    def run(name, pattern):
        o = outcomes(pattern)
        return {"name": name, "success": rate(sum(o.values()), len(o)), "pass_k": {"1": sum(o.values()) / len(o)},
                "outcomes": o, "wall_s": 100.0, **data_value.call_figures([], 0.0)}

    lines = data_value.report_table(run("dv-base", "10000000"), run("dv-after", "01111111"))
    assert "1/8 = 12% [2–47]" in lines[1] and "7/8 = 88% [53–98]" in lines[1]
    assert lines[-2] == "paired (exact McNemar) over 8 (item, trial) pairs: 7 gained, 1 lost, p = 0.0703"
    assert lines[-1] == "paired (exact McNemar) on the first stage passed: 0 gained, 0 lost, p = 1"
    assert data_value.fmt_rate(rate(0, 0)) == "n/a"


def test_the_chat_server_engines_and_their_bench_flags(tmp_path):
    folder = tmp_path / "tuned"
    folder.mkdir()
    llama = data_value.ChatServer(folder, "tuned", 48, threads=2)
    assert llama.engine == data_value.DEFAULT_ENGINE == "llama-server"
    assert llama.bench_args == ["--slots", "4", "--call-prefill", "chatml-tools"]
    assert llama.url == f"http://127.0.0.1:{llama.port}/v1"
    assert llama.work_dir == tmp_path / "served-models"  # converted GGUFs beside the folder
    reference = data_value.ChatServer("base", "smollm2", 48, 1, engine="transformers")
    assert reference.bench_args == []
    assert reference.command[1].endswith("serve_chat.py") and reference.command[-1] == "1"
    with pytest.raises(SystemExit, match="unknown server engine"):
        data_value.ChatServer(folder, "x", 48, engine="vllm")


def test_serve_model_plans_a_converted_folder_with_the_trainers_template(tmp_path):
    from magma_core.cli.serve_model import plan_for

    server = tmp_path / "llama-server"
    server.write_text("#!/bin/sh\n")
    server.chmod(0o755)
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    plan = plan_for(gguf, tmp_path / "work", alias="m", port=8123, slots=2, threads=1, server_bin=server)
    command = plan.command()
    assert plan.gguf == gguf.resolve() and command[command.index("--threads") + 1] == "1"
    from magma_core.agents.model_server import _GENERATION_TAG
    from magma_core.export.chat_template import template_text

    template = plan.template_file.read_text()
    assert _GENERATION_TAG.search(template_text("chatml-tools"))  # the trainers' markers...
    assert "<tool_call>" in template and not _GENERATION_TAG.search(template)  # ...removed
    assert plan_for(gguf, tmp_path / "work", chat_template="model", server_bin=server).template_file is None
