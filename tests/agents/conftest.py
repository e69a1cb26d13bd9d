"""Fixtures for the agent tests: the fake OpenAI endpoint and uvicorn-in-a-thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .agent_helpers import FakeOpenAI, ScriptedServer


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    yield server
    server.close()


@pytest.fixture
def serve() -> Iterator[Callable[[Any], str]]:
    """``serve(app) -> base URL``: run an ASGI app with uvicorn on a free loopback port."""
    import socket

    import uvicorn

    servers: list[tuple[Any, threading.Thread, socket.socket]] = []

    def start(app: Any) -> str:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        server = uvicorn.Server(uvicorn.Config(app, log_level="error", access_log=False))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.started, "uvicorn did not start"
        servers.append((server, thread, sock))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"

    yield start
    for server, thread, sock in servers:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    yield server
    server.close()
