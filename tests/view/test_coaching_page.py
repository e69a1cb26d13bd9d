"""Coached candidates on the generation page: badged in the tree, with the diagnosis and the
coach's exchange in the node panel (JSON API and headless Chromium), on a store grown here by
``Generator`` with the trace coach."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from magma_core.store.generation_store import GenerationStore

from .conftest import ViewerServer
from .test_browser import expect

pytestmark = [pytest.mark.sim, pytest.mark.filterwarnings("ignore")]


@pytest.fixture(scope="module")
def store_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from magma_core.gen import Generator, GenSettings
    from magma_core.gen.assembly import prepare_generation
    from magma_core.gen.coaching import CoachingSettings
    from magma_core.runs.assembly import open_executor

    folder = tmp_path_factory.mktemp("coached-store")
    parts = prepare_generation("sorting.SortAll", "noisy-trace:0.4", seed=0)
    settings = GenSettings(branches=2, max_nodes=40, max_per_stage=2)
    config = {**settings.shape(), "agent": "noisy-trace:0.4", "max_nodes": 40, "trees": 1}
    with GenerationStore(folder / "magma.db") as store:
        store.open_generation("c", "sorting.SortAll", config)
        executor = open_executor(parts.task, 2, 0, parts.judge, "cpu")
        try:
            Generator(parts.task, parts.agent, executor, store, "c", settings, trees=parts.trees,
                      coaching=CoachingSettings("trace")).run()
        finally:
            executor.close()
        store.update_generation("c", config, finished=True)
    return folder


@pytest.fixture(scope="module")
def viewer(store_folder: Path):
    with ViewerServer(store_folder) as server:
        yield server


def test_coached_nodes_are_badged_with_their_diagnosis_and_exchange(page, viewer, store_folder):
    with GenerationStore(store_folder / "magma.db") as store:
        coached = [c for c in store.candidates("c") if c.coaching]
        rows = {r.id: r for r in store.coaching("c")}
    assert coached
    tree_json = httpx.get(f"{viewer.url}/api/generations/c", timeout=30)
    assert tree_json.status_code == 200
    by_id = {c["id"]: c for c in tree_json.json()["candidates"]}
    assert all(by_id[c.id]["coaching"]["role"] == c.coaching["role"] for c in coached)
    assert sum(c["coaching"] is not None for c in by_id.values()) == len(coached)
    page.goto(viewer.url + "/#/generations/c")
    tree = page.get_by_test_id("gen-tree")
    expect(tree.locator("[data-candidate]").first).to_be_visible()
    expect(tree.locator(".node.coached")).to_have_count(len(coached))
    expect(tree.get_by_test_id("coach-badge")).to_have_count(len(coached))
    target = coached[0]
    row = rows[target.coaching["request"]]
    node = tree.locator(f"[data-candidate='{target.id}']")
    expect(node).to_have_attribute("data-coached", target.coaching["role"])
    node.click()
    expect(page).to_have_url(re.compile(rf"#/generations/c/candidate/{target.id}$"))
    panel = page.get_by_test_id("gen-detail").get_by_test_id("coaching")
    expect(panel).to_contain_text(f"by {row.source}")
    expect(panel).to_contain_text("coached candidate" if target.coaching["role"] == "fixed" else "recovery candidate")
    made = panel.get_by_test_id("coaching-row").first
    expect(made).to_contain_text("the request that made it")
    expect(made.get_by_test_id("diagnosis")).to_contain_text(f"decision {row.diagnosis['step_id']}")
    exchange = made.get_by_test_id("coach-exchange")
    expect(exchange).to_contain_text(row.request["request_id"], use_inner_text=False)
    expect(exchange).to_contain_text('"status": "corrected"', use_inner_text=False)
    # the failed branch's end shows what it asked
    terminal = tree.locator(f"[data-candidate='{row.terminal}']")
    terminal.click()
    expect(page.get_by_test_id("gen-detail").get_by_test_id("coaching-row").first).to_contain_text(
        "asked at this branch's end")
