"""benchmarks/learning_curve.py's bookkeeping: arms at equal budget, recovery after an injected
error, the per-split figures and the report table (pure functions; no model, no simulator)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import learning_curve as lc  # noqa: E402
from magma_core.bench.metrics import Trial  # noqa: E402


def rows(n: int, arm: str = "a") -> list[dict]:
    return [{"id": f"{arm}:{i}", "messages": [{"role": "user", "content": f"{arm} {i}"}]} for i in range(n)]


def test_equal_rows_gives_every_arm_the_same_count_and_all_its_rows():
    small, large = rows(5, "s"), rows(300, "l")
    for size in (4, 48, 192):
        a, b = lc.equal_rows(small, size), lc.equal_rows(large, size)
        assert len(a) == len(b) == size
    # an arm with fewer rows than the budget sees each of them (whole epochs first)
    cycled = lc.equal_rows(small, 12)
    assert {r["id"] for r in cycled[:5]} == {r["id"] for r in small}
    assert [r["id"] for r in cycled[5:10]] == [r["id"] for r in cycled[:5]]
    # a function of the rows and the seed, not of their order
    assert lc.equal_rows(list(reversed(large)), 48) == lc.equal_rows(large, 48)
    assert lc.equal_rows(large, 48, seed=1) != lc.equal_rows(large, 48)
    with pytest.raises(ValueError):
        lc.equal_rows([], 4)


def test_the_budget_plan_gives_equal_rows_and_steps_per_size():
    plan = lc.budget_plan({"trace": rows(40, "t"), "coached": rows(166, "c")}, [48, 192], batch_size=4)
    for size in (48, 192):
        entries = [p for p in plan if p["size"] == size]
        assert {p["rows"] for p in entries} == {size}
        assert {p["steps"] for p in entries} == {size // 4}
    trace48 = next(p for p in plan if p["arm"] == "trace" and p["size"] == 48)
    assert trace48["distinct"] == 40 and trace48["epochs"] == pytest.approx(1.2)


def trial(item_id: str, condition: str, passed: int, total: int, status: str, k: int = 0) -> Trial:
    return Trial({"item_id": item_id, "condition": condition}, k, status, passed, total)


def test_recovery_counts_the_injected_stage_passed():
    trials = [trial("a", "execution_error", 2, 2, "success"), trial("b", "execution_error", 0, 2, "exceeded"),
              trial("c", "execution_error", 1, 4, "exceeded"), trial("d", "clean", 2, 2, "success")]
    injected = {"a": [0], "b": [0], "c": [0]}
    assert lc.recovery(trials, injected) == {"injected": 3, "recovered": 2}


def test_split_figures_and_the_report_table():
    base = [trial("i1", "clean", 0, 2, "exceeded"), trial("i2", "clean", 1, 2, "exceeded"),
            trial("e1", "execution_error", 0, 2, "exceeded")]
    tuned = [trial("i1", "clean", 2, 2, "success"), trial("i2", "clean", 2, 2, "success"),
             trial("e1", "execution_error", 2, 2, "success")]
    injected = {"e1": [0]}
    figures = lc.split_figures(tuned, injected)
    assert figures["all"]["success"]["num"] == 3 and figures["clean"]["success"]["den"] == 2
    assert figures["execution_error"]["recovery"] == {"injected": 1, "recovered": 1}
    assert lc.split_figures(base, injected)["all"]["stage_completion"] == pytest.approx(1 / 6)
    calls = {"valid_call_rate": 1.0, "s_per_decision": 0.5}
    results = {"base": {"compositional": {"figures": lc.split_figures(base, injected), "calls": calls}},
               "trace-n48": {"compositional": {"figures": figures, "calls": calls}}}
    lines = lc.report_lines(results)
    assert lines[0].startswith("| split | condition | arm |")
    tuned_all = next(line for line in lines if "| all | trace-n48 |" in line)
    assert "3+/0- p=0.25" in tuned_all          # exact McNemar: 3 discordant pairs, all gained
    assert "| 1/1 |" in next(line for line in lines if "execution_error | trace-n48" in line)


def test_an_onpolicy_round_trains_on_half_its_own_rows_and_half_the_coached_rows():
    new, old = rows(3, "new"), rows(40, "old")
    mixed = lc.mixed_rows(new, old, 48)
    assert len(mixed) == 48 == len(lc.equal_rows(old, 48))
    assert sum(r["id"].startswith("new") for r in mixed) == 24
    assert {r["id"] for r in mixed if r["id"].startswith("new")} == {r["id"] for r in new}
    # interleaved: every batch of 4 holds both kinds
    assert all({r["id"][:3] for r in mixed[i:i + 4]} == {"new", "old"} for i in range(0, 48, 4))
    # a model that produced no usable row leaves the coached rows alone
    assert lc.mixed_rows([], old, 48) == lc.equal_rows(old, 48)
    assert len(lc.mixed_rows(new, old, 5)) == 5


def test_derived_arms_bring_the_arms_they_need_and_only_the_curve_arms_train_at_every_size():
    assert lc.with_needs(["onpolicy-r2"]) == ["coached", "onpolicy-r1", "onpolicy-r2"]
    assert lc.with_needs(["trace", "coached-dpo"]) == ["trace", "coached", "coached-dpo"]
    pairs = lc.labels_of(lc.with_needs(["trace", "noisy", "coached-dpo"]), [192, 48])
    assert pairs == [("trace", 192), ("trace", 48), ("noisy", 48), ("coached", 192), ("coached", 48),
                     ("coached-dpo", 48)]
    assert lc.labels_of(["coached", "onpolicy-r1"], [48, 96, 192], 96) == [
        ("coached", 48), ("coached", 96), ("coached", 192), ("onpolicy-r1", 96)]
    assert lc.onpolicy_round("onpolicy-r2") == 2 and lc.onpolicy_round("coached") is None


def test_an_arm_is_compared_with_trace_sft_of_its_own_size():
    import learning_report as report

    assert report.size_of("coached-dpo-n192") == 192 and report.arm_of("coached-dpo-n192") == "coached-dpo"
    assert report.size_of("base") is None and report.arm_of("base") == "base"
    results = {"base": {}, "trace-n48": {}, "trace-n192": {}, "coached-n192": {}}
    assert report.trace_label(results, "coached-n192") == "trace-n192"
    assert report.trace_label({"trace-n48": {}}, "onpolicy-r1-n192") == "trace-n48"


def test_the_plot_is_written(tmp_path):
    injected = {"e1": [0]}
    calls = {"valid_call_rate": 1.0, "s_per_decision": 0.5}
    results = {label: {"compositional": {"figures": lc.split_figures(
        [trial("i1", "clean", k, 2, "success" if k == 2 else "exceeded")], injected), "calls": calls}}
        for k, label in enumerate(("base", "trace-n48", "trace-n192"))}
    lc.plot(results, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_arm_of_a_size_trains_on_as_many_rows_for_as_many_steps(tmp_path):
    """training_plan over exports laid out as the data phase writes them: the same rows count
    and steps for every arm; DPO starts from the coached model, the unmasked control trains on
    the masked turns, an on-policy round mixes its own rows with the coached ones."""
    import argparse
    import json

    args = argparse.Namespace(out=tmp_path, trees=2, onpolicy_trees=1, nodes_per_tree=40, gen_max_decisions=40,
                              learning_rate=1e-3, batch_size=4, grpo_steps=5, grpo_learning_rate=3e-4, grpo_beta=0.04,
                              grpo_group_size=4, grpo_items=8, max_tokens=48, max_decisions=24,
                              precision="auto", train_threads=1)

    def write(name: str, fmt: str, n: int, origin: str = "model") -> None:
        folder = lc.export_folder(args, name, fmt)
        folder.mkdir(parents=True)
        lines = [{"id": f"{name}:{i}", "messages": [], "origin": origin} for i in range(n)]
        (folder / ("preference_train.jsonl" if fmt == "preference-jsonl" else "chat_train.jsonl")).write_text(
            "".join(json.dumps(line) + "\n" for line in lines))

    for definition in lc.TRAINING_DEFINITIONS:
        for arm, n in (("trace", 3), ("noisy", 7), ("coached", 11)):
            write(lc.data_name(args, arm, definition), "chat-jsonl", n, "coached" if arm == "coached" else "model")
        write(lc.data_name(args, "coached", definition), "preference-jsonl", 2)
        for round_ in (1, 2):
            write(lc.onpolicy_name(args, round_, 48, definition), "chat-jsonl", round_, "recovery")
    plans = {arm: lc.training_plan(args, arm, 48) for arm in lc.ALL_ARMS if arm != "grpo"}
    assert {len(p["rows"]) for p in plans.values()} == {48}
    assert {p["steps"] for p in plans.values()} == {12}
    assert plans["coached-dpo"]["dpo"] and plans["coached-dpo"]["init"].endswith("tuned-coached-n48")
    assert plans["coached-unmasked"]["train_on_masked"] and not plans["coached"]["train_on_masked"]
    assert plans["coached-unmasked"]["rows"] == plans["coached"]["rows"]
    # round 2 aggregates both rounds' rows (4 definitions x (1 + 2)), half the budget
    r2 = [r for r in plans["onpolicy-r2"]["rows"] if r["origin"] == "recovery"]
    assert len(r2) == 24 and len({r["id"] for r in r2}) == 12
    assert len({r["id"] for r in plans["trace"]["rows"]}) == 12        # every trace row, cycled
    # GRPO: no rows, from trace SFT of its size, --grpo-steps groups over seeds of its own
    grpo = lc.training_plan(args, "grpo", 48)
    assert grpo["rows"] == [] and grpo["init"].endswith("tuned-trace-n48") and grpo["steps"] == 5
    command = lc.grpo_command(args, grpo, tmp_path / "m")
    assert command[command.index("--seeds") + 1] == f"{lc.GRPO_FIRST_SEED}-{lc.GRPO_FIRST_SEED + 7}"
    assert command[command.index("--init") + 1] == grpo["init"]
    assert command[command.index("--learning-rate") + 1] == "0.0003"
    assert command[command.index("--max-decisions") + 1] == "24"      # as the evaluation caps episodes
    assert command[command.index("--beta") + 1] == "0.04"


def test_the_trainer_runs_on_a_thread_count_the_command_fixes(monkeypatch):
    """--train-threads N pins OpenMP to N threads waiting passively; 0 leaves torch's default,
    which depends on the machine."""
    import argparse

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    env = lc.training_env(argparse.Namespace(train_threads=1))
    assert env["OMP_NUM_THREADS"] == "1" and env["OMP_WAIT_POLICY"] == "PASSIVE"
    assert "OMP_NUM_THREADS" not in lc.training_env(argparse.Namespace(train_threads=0))


def test_the_noisy_and_coached_arms_differ_by_the_coach_alone_and_grow_one_rollout_a_tree():
    """The coached arm's gain over noisy is the coach's: the same agent and the same one branch
    per situation (two branches doubled the trees at each decision and cut every long row)."""
    def without_coach(options: list[str]) -> list[str]:
        at = options.index("--coach")
        return options[:at] + options[at + 2:]

    assert without_coach(lc.DATA_ARMS["coached"]) == lc.DATA_ARMS["noisy"]
    for options in lc.DATA_ARMS.values():
        assert options[options.index("--branches") + 1] == "1"


def test_a_generation_is_named_by_the_settings_a_resume_must_keep():
    """Changing the node budget or gen's decision cap names another generation, so a store made
    with other settings is never resumed under them."""
    import argparse

    args = argparse.Namespace(trees=16, nodes_per_tree=80, gen_max_decisions=40)
    name = lc.data_name(args, "coached", "sorting.LongSortingTrain")
    assert name == "lc-coached-LongSortingTrain-t16-m80-d40-b1"
    assert lc.data_name(argparse.Namespace(trees=16, nodes_per_tree=80, gen_max_decisions=24), "coached",
                        "sorting.LongSortingTrain") != name
    assert lc.GEN_MAX_DECISIONS > 36  # LongSortingTrain's longest reference path on seeds 0-15
    assert lc.gen_shape(args, ["--agent", "trace", "--branches", "3"]).endswith("-b3")
    assert lc.gen_shape(args, ["--agent", "trace"]).endswith("-b2")  # gen's default
    assert lc.onpolicy_name(argparse.Namespace(onpolicy_trees=8, **vars(args)), 1, 48, "sorting.PairSortingTrain") \
        == "lc-onpolicy-r1-n48-PairSortingTrain-t8-m80-d40-b1"


def test_grpo_seeds_may_not_reach_the_onpolicy_rounds_or_gen_seeds_reach_grpo(tmp_path):
    """The GRPO arm's training seeds lie between gen's and the on-policy rounds'."""
    assert 32 <= lc.GRPO_FIRST_SEED and lc.GRPO_FIRST_SEED + 32 <= lc.ONPOLICY_FIRST_SEED[1]  # the defaults fit
    for options in (["--grpo-items", "300"], ["--trees", str(lc.GRPO_FIRST_SEED + 1)]):
        with pytest.raises(SystemExit, match="GRPO arm's seeds"):
            lc.main(["--out", str(tmp_path), "--phases", "report", *options])


def test_a_derived_size_outside_the_sizes_is_refused_in_one_line(tmp_path):
    with pytest.raises(SystemExit) as refused:
        lc.main(["--out", str(tmp_path), "--phases", "report", "--sizes", "48,96", "--derived-size", "24"])
    assert "--derived-size 24: one of --sizes (48,96)" in str(refused.value)
    assert not (tmp_path / "learning_curve.md").exists()


def test_a_gemma_run_has_its_own_store_starts_from_gemma_and_leaves_grpo_out():
    """--base-model gemma3: its own folder, every SFT/DPO arm trained from Gemma (``--base``),
    GRPO (whose stream reads SmolLM2's turn ends) left out of the default arms and refused
    when named."""
    parse = lc.build_parser("").parse_args
    gemma, smol = parse(["--base-model", "gemma3"]), parse([])
    assert lc.default_out(gemma) == Path("runs/learning-curve-gemma3")
    assert lc.default_out(smol) == Path("runs/learning-curve")
    assert lc.default_out(parse(["--smoke", "--base-model", "gemma3"])) == Path("runs/learning-curve-smoke-gemma3")
    assert lc.chosen_arms(smol) == list(lc.ALL_ARMS)
    assert lc.chosen_arms(gemma) == [arm for arm in lc.ALL_ARMS if arm != "grpo"]
    with pytest.raises(SystemExit, match="the GRPO arm runs on smollm2 only"):
        lc.chosen_arms(parse(["--base-model", "gemma3", "--arms", "trace,grpo"]))
    plan = {"steps": 12, "learning_rate": 1e-3, "dpo": True, "init": "/m/tuned-coached-n48", "train_on_masked": False}
    command = lc.sft_command(gemma, plan, Path("rows.jsonl"), Path("out"))
    assert command[command.index("--base") + 1] == "gemma3" and "--dpo" in command
    assert lc.sft_command(smol, plan, Path("rows.jsonl"), Path("out"))[command.index("--base") + 1] == "smollm2"
    with pytest.raises(SystemExit):
        parse(["--base-model", "llama9"])
