"""Several model backends for one role (agent, judge, user, coach), with failover or round robin.

A role's spec may list several OpenAI-compatible endpoints, comma-separated, with the routing
as an optional item::

    openai:qwen@http://gpu1:8000/v1,openai:qwen@http://gpu2:8000/v1,round-robin

``failover`` (the default) sends every request to the first backend and moves to the next
only when one cannot answer (timeout, transport error, HTTP error after its retries);
``round-robin`` starts each request at the next backend in turn, failing over the same way.
In a ``--config`` file the role is a list (``agent: [openai:a@URL1, openai:b@URL2,
round-robin]``). :class:`BackendPool` has the :class:`~magma_core.agents.chat_client.ChatClient`
interface, so the agents, the judge, the coach and the simulated user use it unchanged; each
reply's ``attempt_log`` names the backend of every attempt.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import Any

from magma_core.agents.chat_client import ChatClient, ChatError, ChatReply
from magma_core.json_types import JSONDict, JSONValue

ROUTINGS = ("failover", "round-robin")
#: error codes after which the next backend is asked (the backend did not answer usefully)
FAILOVER_CODES = frozenset({"timeout", "transport_error", "http_error", "response_too_large", "invalid_reply"})


def split_backends(text: str) -> tuple[list[str], str] | None:
    """``(specs, routing)`` of a spec listing several backends; None for a one-backend spec."""
    items = [item.strip() for item in text.split(",")]
    if len(items) < 2 or not all(items):
        return None
    routing = [i for i in items if i in ROUTINGS]
    specs = [i for i in items if i not in ROUTINGS]
    if len(routing) > 1 or not specs or not all(s.startswith("openai:") for s in specs):
        return None
    return specs, routing[0] if routing else "failover"


class BackendPool:
    """``ChatClient``-like: one client per ``(base_url, model)`` backend, the first being the
    primary (its ``base_url`` and ``model`` are the pool's); ``options`` go to every client."""

    def __init__(self, backends: Sequence[tuple[str, str]], routing: str = "failover", **options: object) -> None:
        if not backends:
            raise ValueError("a backend pool needs at least one backend")
        if routing not in ROUTINGS:
            raise ValueError(f"routing must be one of {', '.join(ROUTINGS)}, got {routing!r}")
        self.clients = [ChatClient(url, model, **options) for url, model in backends]
        self.routing = routing
        self._turn = itertools.count()
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:  # base_url, model, timeout, api_key_env, ...
        return getattr(self.__dict__["clients"][0], name)

    def order(self) -> list[ChatClient]:
        """The backends in the order the next request tries them."""
        if self.routing == "failover":
            return list(self.clients)
        with self._lock:
            start = next(self._turn) % len(self.clients)
        return self.clients[start:] + self.clients[:start]

    def complete(self, messages: list[JSONDict], stream_cap: int | None = None, **params: JSONValue) -> ChatReply:
        """One completion from the first backend (in :meth:`order`) that answers; the last
        error, naming every backend tried, when none does."""
        log: list[JSONDict] = []
        failures: list[str] = []
        last: ChatError | None = None
        for client in self.order():
            try:
                reply = client.complete(messages, stream_cap=stream_cap, **params)
            except ChatError as exc:
                log.extend({**entry, "backend": client.base_url} for entry in exc.attempt_log)
                if exc.code not in FAILOVER_CODES or client.cancelled:
                    raise
                failures.append(f"{client.model}@{client.base_url}: {exc.message}")
                last = exc
                continue
            reply.attempt_log = [*log, *({**e, "backend": client.base_url} for e in reply.attempt_log)]
            reply.attempts = len(reply.attempt_log) or reply.attempts
            return reply
        assert last is not None
        raise ChatError(last.code, f"all {len(self.clients)} backends failed: " + "; ".join(failures),
                        last.raw, last.latency_s, len(log), log, last.request)

    def list_models(self, *args: object, **kwargs: object) -> list[str]:
        """The primary backend's model list (see ``ChatClient.list_models``)."""
        return self.clients[0].list_models(*args, **kwargs)

    @property
    def cancelled(self) -> bool:
        return self.clients[0].cancelled

    def cancel(self) -> None:
        for client in self.clients:
            client.cancel()

    def close(self) -> None:
        for client in self.clients:
            client.close()


def chat_client(base_url: str, model: str, backends: Sequence[tuple[str, str]] = (),
                routing: str = "failover", **options: object) -> ChatClient | BackendPool:
    """A :class:`ChatClient` for one backend, a :class:`BackendPool` when ``backends`` lists
    more than ``(base_url, model)``."""
    if len(backends) > 1:
        return BackendPool(backends, routing, **options)
    return ChatClient(base_url, model, **options)
