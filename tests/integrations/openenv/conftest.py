"""A real MAGMA OpenEnv server on loopback (uvicorn in a thread) over the real engine and
ManiSkill simulator (physx_cpu), one per module; skipped without the ``openenv`` library."""

from __future__ import annotations

import socket
import threading
import time

import pytest

pytest.importorskip("openenv", reason="make test-bridge-openenv installs OpenEnv in .venv-openenv")

import uvicorn  # noqa: E402

from magma_core.integrations.openenv.server import MagmaOpenEnvServer  # noqa: E402
from magma_core.rl import TaskSource, TrainingEnv  # noqa: E402

SLOTS = 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``(base_url, server, out folder)`` of a served ``cube.PickPlace`` with seeds 0 and 1."""
    out = tmp_path_factory.mktemp("openenv")
    env = TrainingEnv(TaskSource.target("cube.PickPlace", seeds=[0, 1]), slots=SLOTS, out=out,
                      name="openenv", backend="cpu")
    server = MagmaOpenEnvServer(env, group_size=2)
    port = _free_port()
    uv = uvicorn.Server(uvicorn.Config(server.app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not uv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", server, out
    uv.should_exit = True
    thread.join(timeout=30)
    env.close()


def trace_actions(env: TrainingEnv, item: int = 0) -> list[dict]:
    """The task's reference decisions as action fields (one robot: no robot argument)."""
    actions = []
    for decision in env.source[item].task.perfect_trace().decisions():
        calls = [{"id": f"call_{i}", "type": "function",
                  "function": {"name": c.name, "arguments": dict(c.arguments)}}
                 for i, c in enumerate(decision.tool_calls)]
        actions.append({"content": decision.say or "", "tool_calls": calls})
    return actions
