"""The client side: OpenEnv's ``EnvClient`` for the MAGMA environment, over its WebSocket.

::

    from magma_core.integrations.openenv.client import MagmaEnvClient, items
    from magma_core.integrations.openenv.models import MagmaAction

    with MagmaEnvClient(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(item="cube.PickPlace@0", group="g0")   # a member of group g0
        result.observation.messages, result.observation.tools
        result = env.step(MagmaAction(tool_calls=[{"type": "function", "function":
                          {"name": "pick", "arguments": {"object": "cube"}}}]))
        result.reward, result.done, result.observation.credit, env.state().group_advantages

Each client is one session on the server (one rollout at a time); several clients reset with
one group key share one start. :func:`items` lists the items with their openings.
"""

from __future__ import annotations

from typing import Any

import httpx
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from magma_core.integrations.openenv.models import MagmaAction, MagmaObservation, MagmaState


class MagmaEnvClient(EnvClient[MagmaAction, MagmaObservation, MagmaState]):
    """OpenEnv's client for the MAGMA environment (``.sync()`` for the blocking wrapper)."""

    def _step_payload(self, action: MagmaAction) -> dict[str, Any]:
        return action.model_dump()

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[MagmaObservation]:
        fields = dict(payload.get("observation") or {})
        observation = MagmaObservation(**fields, reward=payload.get("reward"), done=bool(payload.get("done")))
        return StepResult(observation=observation, reward=payload.get("reward"),
                          done=bool(payload.get("done")), metadata=payload.get("metadata"))

    def _parse_state(self, payload: dict[str, Any]) -> MagmaState:
        return MagmaState(**payload)


def items(base_url: str, timeout_s: float = 600.0) -> list[dict[str, Any]]:
    """The server's items: ``id``, ``seed`` and opening ``messages`` and ``tools``."""
    url = base_url.replace("ws://", "http://").replace("wss://", "https://").rstrip("/")
    response = httpx.get(f"{url}/magma/items", timeout=timeout_s)
    response.raise_for_status()
    return response.json()
