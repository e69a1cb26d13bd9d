"""Helpers for the agent tests: a scripted OpenAI-compatible endpoint on loopback, reply
builders and a request builder."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from magma_core.protocol.agent import AgentInput, AgentRequest


class ScriptedServer:
    """An HTTP server on loopback answering each ``"METHOD /path"`` from ``routes``.

    Each request takes the next entry of its route's list (the last one repeats): a dict or
    list is sent as a 200 JSON body, ``(status, body)`` sends that status and body (str or
    JSON), ``("hang", s)`` waits ``s`` seconds and then answers ``hang_reply``, a callable
    receives the parsed request body and returns one of the above. Unknown routes get 404.
    """

    hang_reply: Any = {}

    def __init__(self) -> None:
        self.routes: dict[str, list[Any]] = {}
        self.requests: list[Any] = []  # parsed bodies of POST requests
        self.calls: list[str] = []  # "METHOD /path" of every request
        self.headers: list[dict[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                fake._answer(self, None)

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                fake.requests.append(body)
                fake._answer(self, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def _answer(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        route = f"{handler.command} {handler.path}"
        self.calls.append(route)
        self.headers.append(dict(handler.headers))
        script = self.routes.get(route) or [(404, {"detail": "Not Found"})]
        entry = script.pop(0) if len(script) > 1 else script[0]
        if callable(entry):
            entry = entry(body)
        status, payload = (200, entry) if isinstance(entry, dict | list) else entry
        if status == "hang":
            time.sleep(payload)
            status, payload = 200, self.hang_reply
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except OSError:  # the client gave up (timeout tests)
            pass

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class FakeOpenAI(ScriptedServer):
    """An OpenAI-compatible endpoint: ``script`` scripts ``POST /v1/chat/completions``."""

    def __init__(self) -> None:
        super().__init__()
        self.hang_reply = completion("late")
        self.base_url = f"{self.url}/v1"
        self.routes["POST /v1/chat/completions"] = []

    @property
    def script(self) -> list[Any]:
        return self.routes["POST /v1/chat/completions"]

    @script.setter
    def script(self, entries: list[Any]) -> None:
        self.routes["POST /v1/chat/completions"] = list(entries)


def completion(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None,
               usage: dict[str, int] | None = None) -> dict[str, Any]:
    """A chat-completions body with one choice."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {
        "id": "cmpl-1", "object": "chat.completion", "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": usage or {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def tool_call(name: str, arguments: Any, call_id: str = "call_a") -> dict[str, Any]:
    """One OpenAI tool call; ``arguments`` is sent as given if a str, else JSON-encoded."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


TOOLS = [
    {"name": "pick", "description": "Pick an object.",
     "parameters": {"object_name": {"description": "what to pick", "type": "str", "required": True},
                    "speed": {"description": "how fast", "type": "float", "required": False}}},
    {"name": "wait", "description": "Do nothing.", "parameters": {}},
]


def make_request(robots: list[str] | None = None, memory: dict[str, Any] | None = None,
                 num_outputs: int = 1, kind: str = "user", content: str = "Pick the cup.",
                 ids: tuple[int, ...] = (0,), request_id: str = "req-1") -> AgentRequest:
    """A request with one input per id, the test tools and the given robots."""
    return AgentRequest(request_id=request_id, inputs=[
        AgentInput(id=i, instruction={"type": kind, "content": content}, tools=TOOLS,
                   attributes={"known_robots": robots if robots is not None else ["r1"]},
                   memory=memory or {}, num_outputs=num_outputs)
        for i in ids
    ])


