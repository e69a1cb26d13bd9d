"""Answers for requests an HTTP route cannot take, shared by the viewer and ``magma serve-agent``.

Every input that is not the route's gets a 4xx with a short JSON reason (``{"detail": ...}``),
never a 500 and never a traceback:

- a body or parameter that does not validate: 422 with each problem's location, message and
  type, *without* the input it was given (an input may be huge, or hold numbers JSON cannot
  write), every text cut to :data:`MAX_TEXT` characters;
- a JSON body with ``NaN``, ``Infinity`` or a number beyond a double's range
  (:class:`FiniteJSONRoute`): 422, as JSON itself has no such numbers;
- an ``HTTPException`` whose reason quotes a long input: the reason is cut the same way.

A store the viewer cannot read (:class:`~magma_core.store.sqlite.StoreError`: damaged,
another program's, newer) is not the request's fault: 503 with the store's one-line reason,
which the viewer's page shows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, NoReturn

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException

from magma_core.json_types import JSONDict, JSONValue
from magma_core.store.sqlite import StoreError

MAX_TEXT = 200  # characters of any text an error answer carries
MAX_PROBLEMS = 20  # validation problems listed in one answer


def short(value: object, limit: int = MAX_TEXT) -> str | int:
    """``value`` as a short text (an int within JSON's safe range stays an int)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53:
        return value
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def validation_problems(exc: RequestValidationError) -> list[JSONDict]:
    """The problems of a request that did not validate, as short JSON-safe dicts (no input)."""
    problems = []
    for error in exc.errors()[:MAX_PROBLEMS]:
        problem = {"loc": [short(part, 80) for part in error.get("loc", ())],
                   "msg": short(str(error.get("msg", ""))), "type": short(str(error.get("type", "")))}
        reason = (error.get("ctx") or {}).get("error")
        if isinstance(reason, str | ValueError):
            problem["reason"] = short(str(reason))
        problems.append(problem)
    return problems


def install_error_answers(app: FastAPI) -> None:
    """Make ``app`` answer bad requests with short 4xx JSON reasons (see the module)."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": validation_problems(exc)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def refused(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        return JSONResponse({"detail": short(detail, 2 * MAX_TEXT)}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    @app.exception_handler(StoreError)
    async def broken_store(request: Request, exc: StoreError) -> JSONResponse:
        return JSONResponse({"detail": short(str(exc), 4 * MAX_TEXT)}, status_code=503)


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {short(text, 40)} is beyond a double's range")
    return number


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def finite_json(body: bytes) -> JSONValue:
    """``body`` parsed as JSON, refusing ``NaN``, ``Infinity`` and out-of-range numbers with a
    ``json.JSONDecodeError`` (which FastAPI answers with 422)."""
    text = body.decode("utf-8", errors="strict") if isinstance(body, bytes) else body
    try:
        return json.loads(text, parse_float=_finite, parse_constant=_no_constant)
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            raise
        raise json.JSONDecodeError(str(exc), text, 0) from None


class _FiniteJSONRequest(Request):
    async def json(self) -> JSONValue:
        if not hasattr(self, "_json"):
            try:
                self._json = finite_json(await self.body())
            except UnicodeDecodeError:
                raise json.JSONDecodeError("the body is not UTF-8", "", 0) from None
        return self._json


class FiniteJSONRoute(APIRoute):
    """A route whose JSON body may not hold ``NaN``, ``Infinity`` or numbers beyond a double's
    range (set as ``app.router.route_class`` before the routes are added)."""

    def get_route_handler(self) -> Callable[[Request], Any]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Any:
            return await handler(_FiniteJSONRequest(request.scope, request.receive))

        return route
