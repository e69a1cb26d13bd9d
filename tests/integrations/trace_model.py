"""The trace agent's replies served as an OpenAI-compatible model on loopback.

:class:`TraceReplies` holds, for each suite item, the assistant messages that make its
reference trace's decisions (the trace agent's replies), keyed by the item's opening
instruction: a conversation whose first user message is that instruction, with ``n``
assistant messages so far, is answered with decision ``n``. ``skip`` drops an item's first
decisions, so that item fails the same way through any driver. Past the end of a trace the
model says it is done (text, no call). :class:`TraceModelServer` serves it as
``POST /v1/chat/completions`` and ``GET /v1/models`` on 127.0.0.1, recording each request.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from magma_core.bench.task_spec import task_from_spec

MODEL = "trace"
DONE = "I have nothing left to do."


class TraceReplies:
    """The trace agent's reply to a conversation (see the module doc)."""

    def __init__(self, items: list[dict[str, Any]], skip: dict[str, int] | None = None) -> None:
        self.scripts: dict[str, list[dict[str, Any]]] = {}
        self.item_of: dict[str, str] = {}
        for item in items:
            events = item["task"]["perfect_trace"]["events"]
            opening = next(e["content"] for e in events if e["type"] == "user")
            if opening in self.scripts:
                raise ValueError(f"items {self.item_of[opening]} and {item['item_id']} open alike: "
                                 "the served trace could not tell them apart")
            decisions = task_from_spec(item["task"]).perfect_trace().decisions()
            self.scripts[opening] = [_message(d, n) for n, d in enumerate(decisions)][(skip or {}).get(item["item_id"], 0):]
            self.item_of[opening] = item["item_id"]

    def reply(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        opening = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), None)
        script = self.scripts.get(opening)
        if script is None:
            raise KeyError(f"no item opens with {opening!r}")
        cursor = sum(1 for m in messages if m.get("role") == "assistant")
        return script[cursor] if cursor < len(script) else {"role": "assistant", "content": DONE}


def _message(decision: Any, n: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": decision.say or ""}
    if decision.tool_calls:
        message["tool_calls"] = [{"id": f"call_{n}_{i}", "type": "function",
                                  "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                                 for i, c in enumerate(decision.tool_calls)]
    return message


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


class TraceModelServer:
    """:class:`TraceReplies` as an OpenAI-compatible endpoint; ``base_url`` ends in ``/v1``."""

    def __init__(self, replies: TraceReplies) -> None:
        self.replies = replies
        self.requests: list[dict[str, Any]] = []
        served = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [
                        {"id": MODEL, "object": "model", "created": 0, "owned_by": "magma-tests"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": "not found"}})
                    return
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                served.requests.append(body)
                try:
                    message = served.replies.reply(body.get("messages") or [])
                except KeyError as exc:
                    self._send(400, {"error": {"message": str(exc)}})
                    return
                self._send(200, {"id": f"cmpl-{len(served.requests)}", "object": "chat.completion",
                                 "created": 0, "model": MODEL, "choices": [{
                                     "index": 0, "message": message,
                                     "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
                                 "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> TraceModelServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
