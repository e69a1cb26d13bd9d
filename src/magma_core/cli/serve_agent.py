"""``magma serve-agent``: serve a built-in agent over HTTP, protocol 2.0 (loopback by default).

    magma serve-agent --agent trace --preset scenario.Name [--port 8888]
    magma serve-agent --agent trace --trace-file trace.json
    magma serve-agent --agent openai:MODEL[@BASE_URL]
    magma serve-agent --agent http://HOST:PORT          (a relay to another agent server)

``--port 0`` picks a free port. Once listening, one line ``serving AGENT on URL`` is printed.
Before that, the model server or agent server being relayed to is checked (``agent.check()``):
an unreachable one is refused in one line. SIGTERM or Ctrl-C stops the server at once: model
requests in flight are cancelled (their candidates come back as ``cancelled`` errors).
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
from typing import TYPE_CHECKING, Any

from magma_core.cli import CliError
from magma_core.cli.agent_options import add_agent_options, chat_options_from
from magma_core.json_types import JSONDict
from magma_core.protocol.agent import AgentHealth, AgentInfo, AgentRequest, AgentResponse

if TYPE_CHECKING:
    from fastapi import FastAPI

    from magma_core.agents.base import Agent
    from magma_core.simulation.tasks.perfect_trace import PerfectTrace

MAX_CANDIDATES = 1024


def create_app(agent: Agent, *, max_candidates: int = MAX_CANDIDATES) -> FastAPI:
    """A FastAPI app serving ``agent`` (``GET /health``, ``GET /v1/info``, ``POST
    /v1/responses``, and the coaching routes of :mod:`magma_core.cli.coaching_routes`, which
    ``/v1/info`` advertises); at most ``max_candidates`` outputs per request, else HTTP 422.

    Invalid requests get a 422 with a short JSON reason that never echoes the input (NaN,
    Infinity and out-of-range numbers included: JSON has none; see
    :mod:`magma_core.view.http_errors`). ``/v1/responses`` runs in a worker thread, so
    ``/health`` and ``/v1/info`` stay responsive while a model thinks. A served agent that
    breaks its own response gets HTTP 500 rather than sending garbage.
    """
    from fastapi import FastAPI, HTTPException

    from magma_core.agents.coaching import coach_with_agent, has_coaching
    from magma_core.cli.coaching_routes import mount_coaching_routes
    from magma_core.protocol.coaching import COACHING_KINDS, COACHING_SESSION_VERSION
    from magma_core.view.http_errors import FiniteJSONRoute, install_error_answers

    app = FastAPI(title=f"MAGMA agent {agent.agent_id}", docs_url=None, redoc_url=None, openapi_url=None)
    app.router.route_class = FiniteJSONRoute  # before the routes: their bodies are read finite
    install_error_answers(app)
    mount_coaching_routes(app, lambda request, config: coach_with_agent(agent, request, config))
    coaching_info = {"specialized_coaching": list(COACHING_KINDS) if has_coaching(agent) else [],
                     "coaching_session_version": COACHING_SESSION_VERSION}
    if not has_coaching(agent):
        coaching_info["coaching_unavailable_reason"] = "this agent has no coaching of its own"

    @app.get("/health", response_model=AgentHealth)
    def health() -> AgentHealth:
        return AgentHealth()

    @app.get("/v1/info", response_model=AgentInfo)
    def info() -> AgentInfo:
        own = agent.info()
        return own if own.coaching_session_version else own.model_copy(update=coaching_info)

    @app.post("/v1/responses")
    def responses(request: AgentRequest) -> list[JSONDict]:
        refused = _refused_ids(request)
        if refused:
            raise HTTPException(422, refused)
        wanted = sum(i.num_outputs for i in request.inputs)
        if wanted > max_candidates:
            raise HTTPException(422, f"the request asks for {wanted} candidates; this server answers at most {max_candidates}")
        try:
            response: AgentResponse = agent.respond(request)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            # a request the agent cannot use (it validated, but its contents do not fit)
            raise HTTPException(422, f"the request cannot be used: {type(exc).__name__}: "
                                     f"{str(exc)[:200]}") from None
        try:
            response.validate_request(request)
        except ValueError as exc:  # the served agent is broken: say so, do not send garbage
            raise HTTPException(500, f"the agent produced an invalid response: {exc}") from None
        return response.model_dump(mode="json")

    return app


MAX_REQUEST_ID = 1000  # characters of a request id this server echoes back
MAX_SAFE_ID = 2**53 - 1  # input ids JSON readers keep exactly


def _refused_ids(request: AgentRequest) -> str:
    """Why this server will not echo the request's ids back ("" when it will)."""
    if len(request.request_id) > MAX_REQUEST_ID:
        return (f"request_id has {len(request.request_id)} characters; this server answers "
                f"at most {MAX_REQUEST_ID}")
    for agent_input in request.inputs:
        if abs(agent_input.id) > MAX_SAFE_ID:
            return f"input id beyond JSON's safe integers (|id| <= {MAX_SAFE_ID})"
    return ""


LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, got {text!r}")
    return port


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("serve-agent", help="serve a built-in agent over HTTP (protocol 2.0)")
    parser.add_argument("--agent", required=True, help="trace | openai:MODEL[@BASE_URL] | http://HOST:PORT")
    parser.add_argument("--preset", help="for --agent trace: replay this preset's perfect trace (scenario.Name)")
    parser.add_argument("--trace-file", help="for --agent trace: replay this trace (PerfectTrace JSON)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=_port, default=8888, help="port (default 8888; 0 picks a free one)")
    parser.add_argument("--log-level", default="warning", choices=LOG_LEVELS,
                        help="uvicorn log level (default warning)")
    add_agent_options(parser)
    parser.set_defaults(func=run)


def _load_trace(args: argparse.Namespace) -> PerfectTrace:
    from magma_core.simulation.tasks.perfect_trace import PerfectTrace

    if bool(args.preset) == bool(args.trace_file):
        raise CliError("--agent trace needs exactly one of --preset scenario.Name or --trace-file PATH")
    if args.trace_file:
        try:
            with open(args.trace_file, encoding="utf-8") as handle:
                return PerfectTrace.from_dict(json.load(handle))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise CliError(f"cannot read trace file {args.trace_file}: {exc}") from None
    try:
        from magma_core.scenarios import load_preset

        return load_preset(args.preset)().perfect_trace()
    except Exception as exc:  # unknown preset, import failure, task without a trace
        raise CliError(f"cannot load the perfect trace of preset {args.preset}: {exc}") from None


def build_agent(args: argparse.Namespace) -> Agent:
    """The agent ``args`` describe, built and checked by the one agent-spec parser
    (:func:`magma_core.agents.build_agent`); a warning from the check goes to stderr."""
    from magma_core.agents import build_agent as build_checked_agent
    from magma_core.agents import parse_spec

    spec = parse_spec(args.agent)
    if spec.kind != "trace" and (args.preset or args.trace_file):
        raise CliError("--preset and --trace-file only apply to --agent trace")
    trace = _load_trace(args) if spec.kind == "trace" else None
    agent = build_checked_agent(args.agent, trace=trace, chat_options=chat_options_from(args))
    if warning := getattr(agent, "check_warning", None):
        print(f"magma: warning: {warning}", file=sys.stderr, flush=True)
    return agent


STOP_GRACE_S = 1


def _stopping_server(uvicorn: Any, config: Any, agent: Agent) -> Any:
    """A uvicorn server that, when told to exit (SIGTERM, SIGINT), also cancels the agent's
    requests in flight, so the responses being computed end and the server stops at once."""

    class StoppingServer(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            cancel = getattr(agent, "cancel", None)
            if callable(cancel):
                cancel()

    return StoppingServer(config)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    agent = build_agent(args)
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        sock.close()
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(create_app(agent), log_level=args.log_level, access_log=False,
                            timeout_graceful_shutdown=STOP_GRACE_S)
    server = _stopping_server(uvicorn, config, agent)
    print(f"serving {agent.agent_id} on http://{shown}:{port}", flush=True)
    try:
        server.run(sockets=[sock])
    finally:
        agent.close()
        sock.close()
    return 0
