"""An agent server of your own: HTTP protocol 2.0, a few rules instead of a model.

It serves ``GET /health``, ``GET /v1/info`` and ``POST /v1/responses`` with FastAPI and
MAGMA's protocol models, and solves the built-in preset ``cube.Machine`` by rules. The
script starts it on a free loopback port and runs ``magma run`` against it.
Run: python examples/agents/rule_agent_server.py
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

from magma_core.protocol.agent import (
    AgentDecision,
    AgentHealth,
    AgentInfo,
    AgentInput,
    AgentOutput,
    AgentRequest,
    AgentToolCall,
)

# --8<-- [start:agent]
#: What to do for each request the user can make (matched in their words, lower case).
PLANS = {
    "switch the machine on": [{"name": "switch_machine", "arguments": {"on": True}}],
    "zone b": [{"name": "pick", "arguments": {"object": "cube"}},
               {"name": "place", "arguments": {"area": "zone_b"}}],
}


def decide(agent_input: AgentInput) -> tuple[AgentDecision, dict]:
    """One decision and the memory to get back with the next input of this episode."""
    memory = dict(agent_input.memory)  # agent-owned: MAGMA hands it back unchanged
    if agent_input.instruction.type == "user":
        # After an action, the user's words come last, after the report of that action.
        words = agent_input.instruction.content.split("\n\n")[-1].lower()
        memory["plan"] = next((plan for key, plan in PLANS.items() if key in words), [])
    plan = list(memory.get("plan", []))
    if not plan:
        return AgentDecision(say="Done."), memory
    memory["plan"] = plan[1:]  # memory is JSON: lists, dicts, strings, numbers
    robot = agent_input.attributes["known_robots"][0]
    return AgentDecision(tool_calls=[AgentToolCall(**plan[0], target_robot_name=robot)]), memory
# --8<-- [end:agent]


# --8<-- [start:server]
app = FastAPI()


@app.get("/health")
def health() -> dict:
    return AgentHealth().model_dump()


@app.get("/v1/info")
def info() -> dict:
    return AgentInfo(agent_id="rule-agent", agent_version="0.1").model_dump()


@app.post("/v1/responses")
def responses(request: AgentRequest) -> list[dict]:
    outputs = []
    for agent_input in request.inputs:  # one input per episode slot
        for index in range(agent_input.num_outputs):  # candidates, in order
            decision, memory = decide(agent_input)
            outputs.append(AgentOutput(
                request_id=request.request_id, source_id=agent_input.id,
                candidate_index=index, status="completed", memory=memory, output=decision,
            ).model_dump(mode="json"))
    return outputs
# --8<-- [end:server]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            if httpx.get(f"{url}/health").status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    try:
        with tempfile.TemporaryDirectory() as out:
            # --8<-- [start:run]
            command = ["magma", "run", "cube.Machine", "--agent", url,
                       "--episodes", "2", "--slots", "2", "--out", out]
            # --8<-- [end:run]
            command[:1] = [sys.executable, "-m", "magma_core.cli"]  # the magma of this Python
            subprocess.run(command, check=True)
            summary = json.loads((Path(out) / "cube.Machine.summary.json").read_text())
            print("totals:", summary["totals"])
            assert summary["totals"]["success"] == 2
    finally:
        server.should_exit = True


if __name__ == "__main__":
    main()
