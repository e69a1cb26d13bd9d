"""The benchmark page, the generation page and the model exchanges of a decision, on one store
made here by the real drivers: ``bench run`` of the smoke suite (trace and noisy-trace
agents), ``magma gen`` with noisy-trace, and a run of an OpenAI-compatible agent against a
loopback chat-completions server. Checked through the JSON API and in Debian's headless
Chromium against what the store (and the bench report) says.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import httpx
import pytest

from magma_core.bench.report import bench_report, significant_differences
from magma_core.bench.report_tables import noise_comparisons
from magma_core.bench.suite import load_suite
from magma_core.store import RunStore
from magma_core.store import scores as sc
from magma_core.store.bench_store import bench_run_name
from magma_core.store.generation_store import GenerationStore

from .conftest import ViewerServer
from .test_browser import expect, shot

pytestmark = [pytest.mark.sim, pytest.mark.filterwarnings("ignore")]


@pytest.fixture(scope="module")
def store_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from agents.agent_helpers import FakeOpenAI, completion, tool_call
    from magma_core.agents import NoisyTraceAgent
    from magma_core.bench.runner import BenchSpec, run_bench
    from magma_core.bench.suite import compile_suite
    from magma_core.gen import Generator, GenSettings
    from magma_core.runs.assembly import build_run_agent
    from magma_core.runs.loop import RunLoop
    from magma_core.scenarios import load_preset
    from magma_core.simulation.executor import Executor

    folder = tmp_path_factory.mktemp("bench-gen-store")
    suite = compile_suite("smoke", folder / "suite").parent
    run_bench(BenchSpec(suite, agent="trace", trials=2, out=folder, name="trace"))
    run_bench(BenchSpec(suite, agent="noisy-trace:0.5", trials=2, out=folder, name="noisy"))

    task = load_preset("cube.PickPlace")()
    settings = GenSettings(branches=2, max_nodes=14)
    config = {**settings.shape(), "agent": "noisy-trace:0.5", "max_nodes": 14, "trees": 1}
    with GenerationStore(folder / "magma.db") as store:
        store.open_generation("g", "cube.PickPlace", config)
        with Executor(task, num_slots=2, seed=0, backend="cpu") as executor:
            agent = NoisyTraceAgent(task.perfect_trace(), noise=0.5, seed=1)
            Generator(task, agent, executor, store, "g", settings).run()
        store.update_generation("g", config, finished=True)

    server = FakeOpenAI()
    server.script = [
        completion("Let me look first.", tool_calls=[tool_call("pick", {"object": "cube"})]),
        completion(tool_calls=[tool_call("place", {"area": "zone_a"})]),
        completion("The cube is in zone A <b>now</b>."),
    ]
    try:
        agent = build_run_agent(f"openai:fake-model@{server.base_url}", task, check=False)
        with RunStore(folder / "magma.db") as store:
            store.open_run("chat", "cube.PickPlace", {"agent": "openai:fake-model", "episodes": 1})
            with Executor(task, num_slots=1, seed=0) as executor:
                RunLoop(task, agent, executor, store, "chat", episodes=1, seed=3).run()
        agent.close()
    finally:
        server.close()
    return folder


@pytest.fixture(scope="module")
def viewer(store_folder: Path):
    with ViewerServer(store_folder) as server:
        yield server


@pytest.fixture(scope="module")
def api(viewer):
    with httpx.Client(base_url=viewer.url, timeout=30) as client:
        yield client


# -- the JSON API -----------------------------------------------------------------------------
def test_the_list_has_benchmarks_and_generations_and_hides_trial_runs(api):
    data = api.get("/api/items").json()
    assert [k["kind"] for k in data["kinds"]] == ["run", "bench", "gen"]
    items = {(i["kind"], i["id"]): i for i in data["items"]}
    assert set(items) == {("run", "chat"), ("bench", "trace"), ("bench", "noisy"), ("gen", "g")}
    trace = items[("bench", "trace")]["counts"]
    assert (trace["episodes"], trace["planned"], trace["statuses"]) == (10, 10, {"success": 10})
    assert items[("bench", "trace")]["href"] == "#/benchmarks/trace"
    gen = items[("gen", "g")]
    assert gen["counts"]["episodes"] == 14 and gen["state"] == "complete"


def test_benchmark_metrics_are_the_reports(api, store_folder):
    page = api.get("/api/benchmarks/trace", params={"compare": "noisy", "price_per_mtok": 2}).json()
    reports = bench_report(store_folder, ["trace", "noisy"], 2.0)
    assert page["metrics"] == json.loads(json.dumps(reports))
    assert page["significant"] == {k: sorted(v) for k, v in significant_differences(reports).items()}
    assert "all" in page["significant"]["noisy"]  # 10/10 against 0/10
    assert page["noise_floor"] == json.loads(json.dumps(noise_comparisons(reports)))
    assert page["noise_floor"]["noisy"]["pairs"] == 10
    assert page["others"] == ["noisy"] and page["planned"] == 10
    trial_run = api.get(f"/api/runs/{page['trials'][0]['run']}").json()["benchmark"]
    assert trial_run == {"bench": "trace", "trials": 2, "items": [i["item_id"] for i in page["items"]]}
    assert api.get("/api/runs/chat").json()["benchmark"] is None
    with RunStore(store_folder / "magma.db") as store:
        for trial in page["trials"]:
            summary = store.episodes(bench_run_name("trace"))[trial["episode"]]
            assert trial["episode_status"] == summary.status and trial["run"] == bench_run_name("trace")
            assert trial["href"] == f"#/runs/{trial['run']}/episodes/{trial['episode']}"
    assert api.get("/api/benchmarks/nope").status_code == 404
    assert api.get("/api/benchmarks/trace", params={"price_per_mtok": -1}).status_code == 422


def test_generation_tree_scores_and_selection_are_the_generators(api, store_folder):
    tree = api.get("/api/generations/g").json()
    with GenerationStore(store_folder / "magma.db") as store:
        candidates = store.candidates("g")
        situations = store.situations("g")
    assert [c["id"] for c in tree["candidates"]] == [c.id for c in candidates]
    assert [s["id"] for s in tree["situations"]] == [s.id for s in situations]
    by_id = {c["id"]: c for c in tree["candidates"]}
    per_situation: dict[int, dict[int, float]] = {}
    for c in candidates:
        shown = by_id[c.id]
        assert (shown["next_situation"], shown["episode_status"]) == (c.next_situation, c.episode_status)
        assert shown["score"] == pytest.approx(sc.score(sc.results_from_json(c.score)))
        per_situation.setdefault(c.situation, {})[c.id] = shown["score"]
    kept = {cid for scores in per_situation.values() for cid in sc.select(scores)}
    assert {c["id"] for c in tree["candidates"] if c["kept"]} == kept
    node = api.get("/api/generations/g/candidate/0").json()
    assert node["candidate"]["output"] == candidates[0].output
    assert node["situation"]["agent_input"] == situations[0].agent_input
    assert api.get("/api/generations/g/candidate/999").status_code == 404
    assert api.get("/api/generations/g/leaf/0").status_code == 404


# -- in the browser ---------------------------------------------------------------------------
def test_benchmark_page_shows_the_report_and_links_trials_to_episodes(page, viewer, store_folder):
    report = bench_report(store_folder, ["trace", "noisy"])
    noisy = report["noisy"]
    page.goto(viewer.url + "/")
    expect(page.locator("tr[data-item]")).to_have_count(4)  # the trials' runs are on their benchmark's page
    shot(page, "list")
    page.locator("tr[data-item=noisy] a").click()
    expect(page).to_have_url(re.compile(r"#/benchmarks/noisy$"))
    expect(page.get_by_test_id("bench-success")).to_have_text(f"{100 * noisy['success']['rate']:.1f}%")
    expect(page.get_by_test_id("bench-trials")).to_have_text("10 / 10")
    for condition, rate in noisy["success_by_condition"].items():
        bar = page.locator(f"[data-testid=chart-conditions] [data-group={condition}] rect.bar")
        expect(bar).to_have_attribute("data-num", str(rate["num"]))
        expect(bar).to_have_attribute("data-den", str(rate["den"]))
    for k, value in noisy["pass_k"].items():
        expect(page.locator(f"[data-testid=chart-passk] [data-series=all] circle[data-k='{k}']")).to_have_attribute(
            "data-value", f"{value:.4f}")
    for condition, counts in noisy["terminal_status_counts"].items():
        for status, n in counts.items():
            expect(page.locator(f"[data-testid=statuses] tr[data-condition={condition}] [data-status={status}]")).to_have_text(str(n))
    for domain_name, rate in noisy["success_by_domain"].items():  # the report's domain breakdown
        expect(page.locator(f"[data-testid=domains] tr[data-domain='{domain_name}'] td[data-run=noisy]")).to_contain_text(
            f"{rate['num']}/{rate['den']}")
    rows = page.locator("[data-testid=trials] tbody tr[data-item]")
    expect(rows).to_have_count(10)

    # a terminal status lists its trials; a condition's bar lists that condition's
    status, n = Counter(s for c in noisy["terminal_status_counts"].values() for s, k in c.items() for _ in range(k)).most_common(1)[0]
    page.locator(f"[data-testid=statuses] [data-status={status}]").first.click()
    expect(page.get_by_test_id("trial-filter")).to_contain_text(f"status = {status}")
    expect(rows).to_have_count(n)
    page.locator("[data-testid=chart-conditions] [data-group=combined]").click()
    expect(rows).to_have_count(2)
    expect(rows.first).to_have_attribute("data-item", re.compile(r"combined$"))

    # compare with the trace agent's run: a second series, the significant difference marked
    page.get_by_test_id("compare").select_option("trace")
    expect(page.locator("[data-testid=chart-conditions] rect.bar[data-run=trace]")).to_have_count(5)
    expect(page.locator("[data-testid=rates] tr[data-rate=all] td[data-run=trace] .sigmark")).to_have_count(1)
    shot(page, "benchmark")

    # the filter outlives the redraw; a trial opens its episode: the stored record
    expect(rows).to_have_count(2)
    page.locator("[data-testid=trials] tbody tr[data-item]").first.get_by_test_id("trial-link").click()
    items = load_suite(store_folder / "suite").items
    combined = next(p for p, i in enumerate(items) if i["condition"] == "combined")
    run, episode = bench_run_name("noisy"), combined * 2  # trial 0 of the combined item (2 trials)
    expect(page).to_have_url(re.compile(re.escape(f"#/runs/{run}/episodes/{episode}") + "$"))
    with RunStore(store_folder / "magma.db") as store:
        record = store.episode_record(run, episode)
    expect(page.get_by_test_id("turn")).to_have_count(len(record["steps"]))
    expect(page.get_by_test_id("failure")).to_contain_text(record["status"])
    crumbs = page.locator("#crumbs a")
    expect(crumbs.nth(2)).to_have_text("noisy")  # all items / benchmarks / noisy / trials / item …
    expect(page.locator("#crumbs")).to_contain_text(f"item {items[combined]['item_id']} · trial 0")
    crumbs.nth(2).click()
    expect(page).to_have_url(re.compile(r"#/benchmarks/noisy$"))


def test_benchmark_page_shows_items_stages_failure_reasons_and_the_noise_floor(page, viewer, store_folder):
    report = bench_report(store_folder, ["noisy", "trace"])
    noisy = report["noisy"]
    page.goto(viewer.url + "/#/benchmarks/noisy")
    items = page.locator("[data-testid=items] tbody tr[data-item-row]")
    expect(items).to_have_count(len(noisy["by_item"]))
    marks = {True: "✓", False: "✗", None: "·"}
    for item_id, row in noisy["by_item"].items():
        tr = page.locator(f"[data-testid=items] tr[data-item-row='{item_id}']")
        expect(tr.locator("[data-col=verdicts]")).to_have_text("".join(marks[v] for v in row["verdicts"]))
        expect(tr.locator("[data-col=success]")).to_have_text(f"{row['success']['num']}/{row['success']['den']}")
        flip = noisy["noise"]["by_item"][item_id]["flip_rate"]
        expect(tr.locator("[data-col=flip-rate]")).to_have_text(f"{100 * flip:.0f}%")
    expect(page.locator("[data-testid=stages] tbody tr[data-stage]")).to_have_count(len(noisy["by_stage"]))
    for stage, row in noisy["by_stage"].items():
        tr = page.locator(f"[data-testid=stages] tr[data-stage='{stage}']")
        expect(tr.locator("[data-col=reached]")).to_have_text(str(row["reached"]))
        expect(tr.locator("[data-col=passed]")).to_contain_text(str(row["passed"]["num"]))
    reasons = noisy["failure_reasons"]
    assert reasons, "the noisy agent fails some trials"
    expect(page.locator("[data-testid=failure-reasons] tbody tr[data-reason]")).to_have_count(len(reasons))
    for status, row in reasons.items():
        tr = page.locator(f"[data-testid=failure-reasons] tr[data-reason={status}]")
        expect(tr.locator("[data-col=trials]")).to_have_text(str(row["trials"]))
    expect(page.locator("[data-testid=noise] tr[data-noise=mixed] td[data-run=noisy]")).to_have_text(
        f"{noisy['noise']['mixed_items']['num']}/{noisy['noise']['mixed_items']['den']}")
    shot(page, "benchmark-breakdown")

    # a failure reason lists its trials; an item lists its own
    status, row = next(iter(reasons.items()))
    page.locator(f"[data-testid=failure-reasons] tr[data-reason={status}] button").click()
    trials = page.locator("[data-testid=trials] tbody tr[data-item]")
    expect(trials).to_have_count(row["trials"])
    item_id = next(iter(noisy["by_item"]))
    page.locator(f"[data-testid=items] tr[data-item-row='{item_id}'] button").click()
    expect(trials).to_have_count(noisy["by_item"][item_id]["success"]["den"])

    # compared with the trace agent: the noise-floor sentence of the report
    page.get_by_test_id("compare").select_option("trace")
    sentence = page.locator("[data-testid=noise-compare][data-run=trace]")
    expected = noise_comparisons(report)["trace"]
    expect(sentence).to_have_text(expected["message"])
    expect(sentence).to_have_attribute("data-verdict", expected["verdict"])


def test_generation_page_draws_the_tree_and_details_any_node(page, viewer, store_folder):
    with GenerationStore(store_folder / "magma.db") as store:
        candidates = store.candidates("g")
        situations = store.situations("g")
    page.goto(viewer.url + "/#/kind/gen")
    page.locator("tr[data-item=g] a").click()
    expect(page).to_have_url(re.compile(r"#/generations/g$"))
    tree = page.get_by_test_id("gen-tree")
    expect(tree.locator("[data-candidate]")).to_have_count(len(candidates))
    expect(tree.locator("[data-situation]")).to_have_count(len(situations))
    expect(page.get_by_test_id("gen-candidates")).to_have_text(f"{len(candidates)} / 14")
    for c in candidates:
        outcome = c.episode_status if c.episode_status != "running" else c.end_status
        expect(tree.locator(f"[data-candidate='{c.id}']")).to_have_attribute("data-outcome", outcome)

    # a candidate: what its situation's agent saw, its decision, what the calls did, the verdict
    chosen = next(c for c in candidates if c.execution and c.execution["calls"] and c.situation > 0)
    tree.locator(f"[data-candidate='{chosen.id}']").click()
    expect(page).to_have_url(re.compile(rf"#/generations/g/candidate/{chosen.id}$"))
    expect(tree.locator(f"[data-candidate='{chosen.id}']")).to_have_class(re.compile(r"\bselected\b"))
    detail = page.get_by_test_id("gen-detail")
    expect(detail.get_by_test_id("detail-title")).to_have_text(f"Candidate {chosen.id}")
    call = chosen.execution["calls"][0]
    expect(detail.get_by_test_id("call").first).to_contain_text(f"{call['robot']}.{call['tool']}(")
    expect(detail.get_by_test_id("call-result").first).to_have_text(call["message"])
    expect(detail.get_by_test_id("verdict")).to_contain_text(chosen.execution["stage_success"])
    seen = json.loads(situations[chosen.situation].agent_input["instruction"]["content"])
    expect(detail.locator(".msg.env")).to_contain_text(seen["infos"])
    shot(page, "generation")

    # a situation: its input and its candidates, each a link
    tree.locator(f"[data-situation='{chosen.situation}']").click()
    expect(detail.get_by_test_id("detail-title")).to_have_text(f"Situation {chosen.situation}")
    kids = [c for c in candidates if c.situation == chosen.situation]
    expect(detail.locator("ul.kids li")).to_have_count(len(kids))

    # colour by score: the best candidate is drawn in the darkest green; zoom changes the scale
    page.locator("[data-testid=colour-mode] [data-mode=score]").click()
    best = max(candidates, key=lambda c: sc.score(sc.results_from_json(c.score)))
    expect(tree.locator(f"[data-candidate='{best.id}']")).to_have_attribute("data-fill", "rgb(43,138,62)")
    before = float(tree.get_attribute("data-scale"))
    page.get_by_test_id("zoom-in").click()
    assert float(tree.get_attribute("data-scale")) == pytest.approx(before * 1.4, rel=1e-2)
    world = tree.locator("g.world")
    moved_from = world.get_attribute("transform")
    box = tree.bounding_box()
    page.mouse.move(box["x"] + 8, box["y"] + box["height"] - 8)  # a corner without nodes: drag pans
    page.mouse.down()
    page.mouse.move(box["x"] + 108, box["y"] + box["height"] - 48, steps=5)
    page.mouse.up()
    assert world.get_attribute("transform") != moved_from
    assert float(tree.get_attribute("data-scale")) == pytest.approx(before * 1.4, rel=1e-2)

    # a deep link opens the page with the node selected
    page.goto(viewer.url + f"/#/generations/g/candidate/{best.id}")
    expect(page.get_by_test_id("detail-title")).to_have_text(f"Candidate {best.id}")
    page.locator(".crumbs a").first.evaluate("() => { location.hash = '#/generations/g'; }")
    expect(page.get_by_test_id("detail-title")).to_have_count(0)  # nothing selected: the hint
    expect(tree.locator(".node.selected")).to_have_count(0)


def test_each_decision_shows_its_exact_model_request_and_raw_reply(page, viewer, store_folder):
    with RunStore(store_folder / "magma.db") as store:
        record = store.episode_record("chat", 0)
    per_decision = record["agent"]["per_decision"]
    page.goto(viewer.url + "/#/runs/chat/episodes/0")
    turns = page.get_by_test_id("turn")
    expect(turns).to_have_count(len(record["steps"]))
    for i, entry in enumerate(per_decision):
        exchange = entry["model_calls"][0]
        panel = turns.nth(i).get_by_test_id("exchanges")
        expect(panel).not_to_have_attribute("open", "")
        expect(panel.get_by_test_id("exchange-reply")).to_be_hidden()
        panel.locator("summary").first.click()
        expect(panel.get_by_test_id("exchange-reply")).to_have_text(exchange["output_raw"])
        panel.locator("details summary").first.click()
        shown = json.loads(panel.get_by_test_id("exchange-request").inner_text())
        assert shown == exchange["request"] and shown["model"] == "fake-model"
    expect(turns.nth(0)).not_to_have_class(re.compile(r"\bselected\b"))  # opening it selects nothing
    last = turns.nth(len(per_decision) - 1).get_by_test_id("exchange-reply")
    expect(last).to_contain_text("<b>now</b>")
    expect(last.locator("b")).to_have_count(0)
    shot(page, "exchanges")
