"""A run store made by real episodes (engine, simulator, trace agent), and the viewer on it."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from magma_core.agents import TraceAgent
from magma_core.agents.base import Agent
from magma_core.protocol.agent import AgentOutput, AgentRequest, AgentResponse
from magma_core.runs.loop import RunLoop
from magma_core.scenarios import load_preset
from magma_core.simulation.executor import Executor
from magma_core.store import RunStore
from magma_core.view import create_app
from magma_core.view.server import bind, url_of

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


class TalkingAgent(Agent):
    """Says something and never calls a tool: the episode ends as ``no_action``."""

    def respond(self, request: AgentRequest) -> AgentResponse:
        return AgentResponse([
            AgentOutput(status="completed", output={"say": "Let me think about <b>that</b>."},
                        request_id=request.request_id, source_id=i.id, candidate_index=0,
                        memory=i.memory)
            for i in request.inputs
        ])


def run_preset(store: RunStore, name: str, preset: str, agent: Any = None, episodes: int = 1) -> None:
    task = load_preset(preset)()
    store.open_run(name, preset, {"preset": preset, "agent": "trace", "episodes": episodes})
    with Executor(task, num_slots=1, seed=0) as executor:
        RunLoop(task, agent or TraceAgent(task.perfect_trace()), executor, store, name,
                episodes=episodes, seed=3).run()


@pytest.fixture(scope="session")
def viewer_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store folder with runs ``sorting`` (SortAll, 2 episodes), ``machine`` (cube.Machine) and
    ``stuck`` (an agent that only talks: no_action)."""
    folder = tmp_path_factory.mktemp("viewer-store")
    with RunStore(folder / "magma.db") as store:
        run_preset(store, "sorting", "sorting.SortAll", episodes=2)
        run_preset(store, "machine", "cube.Machine")
        run_preset(store, "stuck", "cube.PickPlace", agent=TalkingAgent())
    return folder


class ViewerServer:
    """The viewer app served by uvicorn in a thread on a free loopback port."""

    def __init__(self, folder: Path) -> None:
        self.sock = bind("127.0.0.1", 0)
        self.url = url_of(self.sock)
        config = uvicorn.Config(create_app(folder), log_level="warning", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       daemon=True)

    def __enter__(self) -> ViewerServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/api/stamp", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError("the viewer did not start")

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


@pytest.fixture(scope="session")
def live_store(viewer_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the viewer store that tests may add runs to."""
    folder = tmp_path_factory.mktemp("live-store")
    shutil.copy(viewer_store / "magma.db", folder / "magma.db")
    return folder


@pytest.fixture(scope="session")
def viewer(live_store: Path):
    with ViewerServer(live_store) as server:
        yield server


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 960})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    yield page
    context.close()
    assert errors == [], f"JavaScript errors: {errors}"
