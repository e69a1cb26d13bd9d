"""The viewer in Debian's headless Chromium (Playwright): runs → episode → decision, the
replay stepping in sync with the conversation, checked against the store.

``MAGMA_SCREENSHOTS=DIR`` saves a screenshot of each page there (``make screenshots``
refreshes docs/images that way).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from magma_core.store import RunStore

from .test_api import _add_run, copy_episode

pytestmark = pytest.mark.sim

SHOTS = os.environ.get("MAGMA_SCREENSHOTS")


def shot(page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.wait_for_timeout(500)
        page.evaluate("window.scrollTo(0, 0)")
        page.wait_for_timeout(300)
        page.screenshot(path=str(Path(SHOTS) / f"viewer-{name}.png"))


def expect(locator):
    from playwright.sync_api import expect as pw_expect

    pw_expect.set_options(timeout=15_000)  # the machine may be busy
    return pw_expect(locator)


def call_text(call: dict) -> str:
    args = ", ".join(f'{k}="{v}"' if isinstance(v, str) else f"{k}={v}" for k, v in call["arguments"].items())
    return f'{call["robot"]}.{call["tool"]}({args})'


def test_runs_to_episode_to_decision_and_replay(page, viewer, live_store):
    with RunStore(live_store / "magma.db") as store:
        record = store.episode_record("sorting", 0)
        world = store.episode_world("sorting", 0)
        summaries = store.episodes("sorting")
    steps = record["steps"]

    page.goto(viewer.url + "/")
    rows = page.locator("[data-testid=items] tbody tr[data-item]")
    expect(rows.filter(has_text="sorting.SortAll")).to_have_count(1)
    expect(page.locator("tr[data-item=stuck]")).to_contain_text("0/1 ok")
    shot(page, "runs")

    page.locator("tr[data-item=sorting] a").click()
    expect(page).to_have_url(re.compile(r"#/runs/sorting$"))
    episode_rows = page.locator("[data-testid=episodes] tbody tr[data-episode]")
    expect(episode_rows).to_have_count(len(summaries))
    expect(episode_rows.first).to_contain_text(f"{summaries[0].stages_passed}/{summaries[0].stages_total}")
    expect(page.get_by_test_id("card-success")).to_have_text("2 / 2")
    shot(page, "run")

    episode_rows.first.click()
    expect(page).to_have_url(re.compile(r"#/runs/sorting/episodes/0$"))
    turns = page.get_by_test_id("turn")
    expect(turns).to_have_count(len(steps))
    expect(page.locator("[data-testid=stages] .stage")).to_have_count(len(record["stages"]))
    svg = page.get_by_test_id("replay-svg")
    expect(svg).to_have_attribute("data-position", "0")
    expect(page.get_by_test_id("replay-caption")).to_contain_text("Start")
    _expect_cubes_at(page, world["states"][0])

    # each turn shows the decision's calls and their results as stored
    for i, step in enumerate(steps):
        turn = turns.nth(i)
        for call in step["calls"]:
            expect(turn).to_contain_text(call_text(call))
            expect(turn).to_contain_text(call["message"])
        expect(turn.get_by_test_id("verdict")).to_contain_text(step["stage_success"])

    # select decision 2: the replay shows the world after it, the URL names it
    turns.nth(1).click()
    expect(page).to_have_url(re.compile(r"/decisions/1$"))
    expect(turns.nth(1)).to_have_class(re.compile(r"\bselected\b"))
    expect(svg).to_have_attribute("data-position", "2")
    expect(page.get_by_test_id("replay-caption")).to_contain_text(f"After decision 2 of {len(steps)}")
    expect(page.get_by_test_id("replay-caption")).to_contain_text(call_text(steps[1]["calls"][0]))
    _expect_cubes_at(page, world["states"][2])
    shot(page, "episode")

    # step the replay: next, keyboard back, last, first; the conversation follows
    page.get_by_test_id("replay-next").click()
    expect(svg).to_have_attribute("data-position", "3")
    expect(turns.nth(2)).to_have_class(re.compile(r"\bselected\b"))
    expect(turns.nth(1)).not_to_have_class(re.compile(r"\bselected\b"))
    _expect_cubes_at(page, world["states"][3])
    page.keyboard.press("ArrowLeft")
    expect(svg).to_have_attribute("data-position", "2")
    page.get_by_test_id("replay-last").click()
    expect(svg).to_have_attribute("data-position", str(len(steps)))
    _expect_cubes_at(page, world["states"][-1])
    expect(page.get_by_test_id("replay-slider")).to_have_value(str(len(steps)))
    page.get_by_test_id("replay-first").click()
    expect(svg).to_have_attribute("data-position", "0")

    # the next episode is one click away
    page.get_by_test_id("next-episode").click()
    expect(page).to_have_url(re.compile(r"#/runs/sorting/episodes/1$"))
    expect(page.get_by_test_id("prev-episode")).to_have_text("← episode 0")
    expect(page.get_by_test_id("raw-record")).to_contain_text('"seed": 4')

    # a deep link opens the episode at that decision
    page.goto(viewer.url + "/#/runs/sorting/episodes/0/decisions/4")
    expect(page.get_by_test_id("replay-svg")).to_have_attribute("data-position", "5")
    expect(page.get_by_test_id("turn").nth(4)).to_have_class(re.compile(r"\bselected\b"))


def _expect_cubes_at(page, state: dict) -> None:
    for name in ("red_cube", "green_cube", "blue_cube"):
        x, y = state["actors"][name][:2]
        cube = page.locator(f'[data-testid=replay-svg] polygon[data-kind=object][data-name="{name}"]')
        expect(cube).to_have_attribute("data-x", f"{x:.4f}")
        expect(cube).to_have_attribute("data-y", f"{y:.4f}")


def test_a_failed_episode_shows_its_reason_and_untrusted_text_as_text(page, viewer, live_store):
    with RunStore(live_store / "magma.db") as store:
        record = store.episode_record("stuck", 0)
    page.goto(viewer.url + "/#/runs/stuck/episodes/0")
    failure = page.get_by_test_id("failure")
    expect(failure).to_contain_text("no_action")
    expect(failure).to_contain_text(record["reason"])
    say = page.get_by_test_id("say").first
    expect(say).to_have_text("Let me think about <b>that</b>.")
    expect(say.locator("b")).to_have_count(0)
    shot(page, "failure")


def test_extra_state_is_shown_beside_the_replay(page, viewer):
    page.goto(viewer.url + "/#/runs/machine/episodes/0/decisions/0")
    expect(page.get_by_test_id("replay-extra")).to_contain_text("machine_on = false")


def test_the_list_refreshes_when_a_run_is_stored(page, viewer, live_store):
    page.goto(viewer.url + "/")
    expect(page.locator("tr[data-item=sorting]")).to_have_count(1)
    expect(page.locator("tr[data-item=arrived-later]")).to_have_count(0)
    _add_run(live_store, "arrived-later")
    expect(page.locator("tr[data-item=arrived-later]")).to_have_count(1, timeout=10_000)


def test_unknown_pages_say_so(page, viewer):
    page.goto(viewer.url + "/#/runs/nope")
    expect(page.get_by_test_id("error")).to_contain_text("no run named 'nope'")
    page.goto(viewer.url + "/#/what/is/this")
    expect(page.get_by_test_id("error")).to_contain_text("no page at #/what/is/this")


def test_episodes_filter_by_status(page, viewer, live_store):
    _add_run(live_store, "mixed")
    copy_episode(live_store, "stuck", 0, "mixed", 1, world=False)  # a failed episode
    page.goto(viewer.url + "/#/runs/mixed")
    rows = page.locator("[data-testid=episodes] tbody tr[data-episode]")
    expect(rows).to_have_count(2)
    page.locator("[data-testid=status-filter] [data-status=no_action]").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-episode", "1")
    rows.first.click()  # an episode stored without world states: the replay says so
    expect(page.get_by_test_id("replay")).to_contain_text("No world states were recorded")


def test_the_list_fits_a_1280_px_window(browser, viewer, live_store):
    """Long run names and agent URLs wrap: the list needs no horizontal scrolling at 1280 px."""
    name = "a-long-benchmark-name-" + "x" * 60
    with RunStore(live_store / "magma.db") as store:
        store.open_run(name, "cube.Machine", {"agent": "openai:" + "model-" * 8 + "@http://127.0.0.1:65535/v1",
                                              "episodes": 1})
    copy_episode(live_store, "machine", 0, name, 0, world=False)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(viewer.url + "/")
        expect(page.locator(f"tr[data-item='{name}']")).to_have_count(1, timeout=10_000)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1280, width
    finally:
        context.close()
