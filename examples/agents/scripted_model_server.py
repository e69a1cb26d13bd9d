"""What a model sees: a scripted OpenAI-compatible endpoint behind ``--agent openai:...``.

MAGMA's OpenAI-compatible agent talks to any chat-completions server (vLLM, Ollama,
llama.cpp's server, OpenAI). This one follows a script instead of a model, and prints the
tools and the system message MAGMA sent it; the script starts it on a free loopback port
and runs ``magma run`` against it. Run: python examples/agents/scripted_model_server.py
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from fastapi import FastAPI

SCRIPT = {  # the user's words -> the tool calls, one per turn, then a final message
    "switch the machine on": [("switch_machine", {"on": True})],
    "zone b": [("pick", {"object": "cube"}), ("place", {"area": "zone_b"})],
}
seen: list[dict] = []  # the requests received

# --8<-- [start:server]
app = FastAPI()


@app.get("/v1/models")
def models() -> dict:
    return {"object": "list", "data": [{"id": "scripted", "object": "model"}]}


@app.post("/v1/chat/completions")
def chat(body: dict) -> dict:
    seen.append(body)
    messages = body["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    words = messages[last_user]["content"].lower()
    plan = next((p for key, p in SCRIPT.items() if key in words), [])
    done = sum(1 for m in messages[last_user:] if m["role"] == "assistant")
    if done < len(plan):
        name, arguments = plan[done]
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{len(seen)}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}]}
    else:
        message = {"role": "assistant", "content": "Done."}
    return {"id": f"chatcmpl-{len(seen)}", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}
# --8<-- [end:server]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    base_url = f"http://127.0.0.1:{port}/v1"
    for _ in range(100):
        try:
            if httpx.get(f"{base_url}/models").status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    try:
        with tempfile.TemporaryDirectory() as out:
            # --8<-- [start:run]
            command = ["magma", "run", "cube.Machine", "--agent", f"openai:scripted@{base_url}",
                       "--episodes", "1", "--out", out]
            # --8<-- [end:run]
            command[:1] = [sys.executable, "-m", "magma_core.cli"]  # the magma of this Python
            subprocess.run(command, check=True)
            summary = json.loads((Path(out) / "cube.Machine.summary.json").read_text())
            assert summary["totals"]["success"] == 1
            print("tokens counted:", summary["totals"]["total_tokens"])
        first = seen[0]
        print("tools offered:", json.dumps(first["tools"][0], indent=1))
        print("system message:", first["messages"][0]["content"])
        print("first user message:", first["messages"][1]["content"])
    finally:
        server.should_exit = True


if __name__ == "__main__":
    main()
