"""A small OpenAI-compatible chat server for a transformers model (loopback only): the base
SmolLM2-135M-Instruct (its GGUF) or a tuned, merged model folder, so that MAGMA's agent
(``--agent openai:MODEL@http://127.0.0.1:PORT/v1``) talks to either one unchanged.

Prompts are rendered with the same tool-aware ChatML template the training rows were rendered
with; the reply's ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` blocks become
OpenAI ``tool_calls`` (arguments as a JSON string), the text around them the ``content``.
A block that is not a JSON object with a string ``name`` stays in the content, as the model
wrote it (the agent then counts a reply without a valid call). Greedy decoding unless the
request asks for a temperature above 0; one request at a time. Run::

    python examples/training/serve_chat.py --model base --port 8011
    python examples/training/serve_chat.py --model runs/data-value/tuned --port 8011
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
END_MARKERS = ("<|im_end|>", "<|endoftext|>")
LOOPBACK = "127.0.0.1"


# --8<-- [start:parse]
def parse_reply(text: str, call_prefix: str = "call") -> dict[str, Any]:
    """The assistant message (OpenAI shape) of a model's raw reply ``text``."""
    for marker in END_MARKERS:
        text = text.split(marker)[0]
    calls: list[dict[str, Any]] = []
    kept: list[str] = []
    position = 0
    for match in TOOL_CALL.finditer(text):
        call = _call(match.group(1))
        if call is None:
            continue  # left in the content as written
        kept.append(text[position:match.start()])
        position = match.end()
        calls.append({"id": f"{call_prefix}_{len(calls)}", "type": "function",
                      "function": {"name": call[0], "arguments": json.dumps(call[1])}})
    kept.append(text[position:])
    content = "".join(kept).strip()
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = calls
    elif message["content"] is None:
        message["content"] = ""
    return message


def _call(body: str) -> tuple[str, dict[str, Any]] | None:
    """(name, arguments) of one ``<tool_call>`` body, or None when it is not a call."""
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    if not isinstance(arguments, dict):
        return None
    return data["name"], arguments
# --8<-- [end:parse]


class ChatModel:
    """A model and its tokenizer answering chat-completion requests, one at a time."""

    def __init__(self, model: Any, tokenizer: Any, name: str, max_new_tokens: int = 256) -> None:
        self.model, self.tokenizer, self.name = model.eval(), tokenizer, name
        self.max_new_tokens = max_new_tokens
        self.lock = threading.Lock()
        self.served = 0

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat-completion response to the request ``body``."""
        import torch

        messages = body.get("messages") or []
        tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
        if body.get("tool_choice") == "none":
            tools = []
        ids = self.tokenizer.apply_chat_template(messages, tools=tools or None, add_generation_prompt=True,
                                                 return_tensors="pt", return_dict=True)
        limit = int(body.get("max_tokens") or body.get("max_completion_tokens") or self.max_new_tokens)
        limit = max(1, min(limit, self.max_new_tokens))
        temperature = float(body.get("temperature") or 0.0)
        sampling = {"do_sample": True, "temperature": temperature,
                    "top_p": float(body.get("top_p") or 1.0)} if temperature > 0 else {"do_sample": False}
        with self.lock, torch.no_grad():
            if temperature > 0 and body.get("seed") is not None:
                torch.manual_seed(int(body["seed"]))
            out = self.model.generate(**ids, max_new_tokens=limit, pad_token_id=self.tokenizer.pad_token_id,
                                      **sampling)
            self.served += 1
            number = self.served
        new = out[0][ids["input_ids"].shape[1]:]
        text = self.tokenizer.decode(new, skip_special_tokens=False)
        return response(body, text, int(ids["input_ids"].shape[1]), len(new), limit, number, self.name)


def response(body: dict[str, Any], text: str, prompt_tokens: int, completion_tokens: int,
             limit: int, number: int, model: str) -> dict[str, Any]:
    """The chat-completion response (OpenAI shape) of the raw reply ``text`` to ``body``."""
    message = parse_reply(text, call_prefix=f"call_{number}")
    finish = "tool_calls" if message.get("tool_calls") else (
        "length" if completion_tokens >= limit and not any(m in text for m in END_MARKERS) else "stop")
    return {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", model),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def make_server(chat: Any, port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server on 127.0.0.1:``port`` (0: a free port) answering ``/v1/models`` and
    ``/v1/chat/completions`` with ``chat`` (a :class:`ChatModel`, or anything with a ``name``
    and a ``complete(body) -> response``); call ``serve_forever`` on it."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, data: dict[str, Any]) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send(200, {"object": "list", "data": [{"id": chat.name, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                    raise ValueError("the body needs a 'messages' list")
            except (ValueError, json.JSONDecodeError) as exc:
                self._send(400, {"error": {"message": f"bad request: {exc}"}})
                return
            try:
                self._send(200, chat.complete(body))
            except Exception as exc:  # a template or generation error: the client sees it
                self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}"}})

    return ThreadingHTTPServer((LOOPBACK, port), Handler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="base", help="'base' (the GGUF) or a merged model folder")
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--name", default=None, help="the model id the server reports")
    parser.add_argument("--max-new-tokens", type=int, default=256, help="cap on each reply's tokens")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = parser.parse_args()
    import torch
    from gguf_model import load_model

    if args.threads:
        torch.set_num_threads(args.threads)
    model, tokenizer = load_model(args.model)
    name = args.name or ("smollm2-135m" if args.model == "base" else Path(args.model).name)
    server = make_server(ChatModel(model, tokenizer, name, args.max_new_tokens), args.port)
    print(f"serving {name} on http://{LOOPBACK}:{server.server_address[1]}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
