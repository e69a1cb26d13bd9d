"""Loopback agent servers (protocol 2.0, 127.0.0.1 only) for tests and benchmarks.

:class:`LoopbackAgentServer` serves an :class:`~magma_core.agents.base.Agent` from a
thread-per-connection stdlib server, each answer after ``delay(request)`` seconds (e.g. a
log-normal model latency) — real HTTP on a real socket, so clients meet real timing. A
``reply`` hook may replace the answer by any raw ``(status, body bytes)``: the fuzz tests use it
to send malformed replies.

    with LoopbackAgentServer(TraceAgent(trace), delay=lognormal_delay(0.2, 0.8, seed=1)) as s:
        magma run ... --agent s.url
"""

from __future__ import annotations

import json
import math
import random
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from magma_core.agents.base import Agent
from magma_core.json_types import JSONValue
from magma_core.protocol.agent import PROTOCOL_VERSION, AgentRequest

#: ``reply(request_json, agent_answer_json) -> (status, body)`` or None to send the answer.
ReplyHook = Callable[[JSONValue, JSONValue], tuple[int, bytes] | None]


def lognormal_delay(mean_s: float, sigma: float, seed: int = 0) -> Callable[[JSONValue], list[float]]:
    """Per input of a request, a model latency drawn from a log-normal of mean ``mean_s``
    seconds and shape ``sigma`` (the server answers a request after the longest of them, as
    a server running its inputs' model calls side by side would)."""
    rng = random.Random(seed)
    lock = threading.Lock()
    mu = math.log(mean_s) - sigma * sigma / 2 if mean_s > 0 else 0.0

    def delay(request: JSONValue) -> list[float]:
        count = len(request.get("inputs", [])) if isinstance(request, dict) else 1
        if mean_s <= 0:
            return [0.0] * count
        with lock:
            return [rng.lognormvariate(mu, sigma) for _ in range(count)]

    return delay


class LoopbackAgentServer:
    """Serves ``agent`` on ``127.0.0.1`` (a free port); ``url`` once started.

    ``delay(request)`` gives seconds to wait, or one latency per input (the longest is
    waited); ``delays`` keeps every latency drawn, for computing ideal bounds."""

    def __init__(self, agent: Agent, *, delay: Callable[[JSONValue], float | list[float]] | None = None,
                 reply: ReplyHook | None = None) -> None:
        self.agent = agent
        self.delay = delay or (lambda request: 0.0)
        self.reply = reply
        self.delays: list[float] = []
        self.requests = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> LoopbackAgentServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                if self.path == "/health":
                    self._send(200, b'{"status": "ready"}')
                elif self.path == "/v1/info":
                    info = owner.agent.info().model_dump(mode="json")
                    info["protocol_version"] = PROTOCOL_VERSION
                    self._send(200, json.dumps(info).encode())
                else:
                    self._send(404, b'{"detail": "not found"}')

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length", 0))
                status, body = owner.handle(self.rfile.read(length))
                self._send(status, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def handle(self, raw: bytes) -> tuple[int, bytes]:
        """The status and body answering one ``POST /v1/responses``."""
        data = json.loads(raw)
        drawn = self.delay(data)
        latencies = drawn if isinstance(drawn, list) else [drawn]
        with self._lock:
            self.requests += 1
            self.delays.extend(latencies)
        time.sleep(max(latencies, default=0.0))
        answer = self.agent.respond(AgentRequest.model_validate(data)).model_dump(mode="json")
        if self.reply is not None:
            replaced = self.reply(data, answer)
            if replaced is not None:
                return replaced
        return 200, json.dumps(answer).encode()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackAgentServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
