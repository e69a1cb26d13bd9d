"""The viewer's web app: a JSON API over the run store and the static front end.

Routes (all read-only):

* ``GET /`` — the single-page front end (``static/index.html``); pages live in the URL hash.
* ``GET /api/stamp`` — a token that changes when the store does (the page polls it).
* ``GET /api/items[?kind=run]`` — the home list, every kind (see :mod:`.catalog`).
* ``GET /api/runs/{name}`` — a run, its config and episode summaries (and ``benchmark``:
  the benchmark run whose trials it holds, or null).
* ``GET /api/runs/{name}/episodes/{k}`` — an episode's summary and full record.
* ``GET /api/runs/{name}/episodes/{k}/world`` — its scene and world states for the replay.
* ``GET /api/runs/{name}/episodes/{k}/video[?kind=schematic|auto|rendered]`` — its video
  (mp4), made by the render package (see :mod:`.videos`); header ``X-Magma-Video-Kind`` says
  which kind it is, ``X-Magma-Video-Note`` why ``auto`` fell back to the schematic.
* ``GET /api/runs/{name}/episodes/{k}/images/{decision}/{camera}`` — the camera image the
  agent saw at a decision (runs with ``--observe images``; the episode's ``images`` lists them).
* ``GET /api/benchmarks/{name}[?compare=OTHER&price_per_mtok=P]`` — a benchmark run's report
  metrics (see :mod:`.benchmarks`) and its trials.
* ``GET /api/generations/{name}`` — a generation's trees (see :mod:`.generations`).
* ``GET /api/generations/{name}/{situation|candidate}/{id}`` — one node in full.

A request that is not the viewer's gets a 4xx with a short JSON reason (ids beyond SQLite's
integer range, a price that is not a finite number, long names cut in the message), and a
store it cannot read a 503 with the store's one-line reason (see :mod:`.http_errors`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import FastAPI, HTTPException, Query
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware

from magma_core.json_types import JSONDict
from magma_core.store.reader import StoreReader
from magma_core.view.benchmarks import bench_of_run, bench_page
from magma_core.view.catalog import KINDS, list_items
from magma_core.view.generations import generation_tree, node_detail
from magma_core.view.http_errors import install_error_answers
from magma_core.view.videos import episode_video

STATIC = Path(__file__).parent / "static"
#: Host headers answered by default: loopback names only, so a web page elsewhere cannot read
#: the store through a DNS name rebound to 127.0.0.1.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
#: Episode and node ids the routes take: SQLite's integers (a larger one is a 422, not a 500).
Id = Annotated[int, PathParam(ge=0, le=2**63 - 1)]


def create_app(folder: str | Path, *, allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS) -> FastAPI:
    """The viewer app over the run store in ``folder`` (``folder/magma.db``), answering
    requests whose Host is one of ``allowed_hosts``."""
    reader = StoreReader(folder)
    app = FastAPI(title="MAGMA viewer", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
    app.state.reader = reader
    install_error_answers(app)

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/api/stamp")
    def stamp() -> JSONDict:
        return {"stamp": reader.stamp(), "store": str(reader.path)}

    @app.get("/api/items")
    def items(kind: str | None = None) -> JSONDict:
        if kind is not None and kind not in {k.kind for k in KINDS}:
            raise HTTPException(404, f"unknown kind {kind!r}")
        return list_items(reader, kind)

    @app.get("/api/runs/{name}")
    def run(name: str) -> JSONDict:
        found = reader.run(name)
        if found is None:
            raise HTTPException(404, f"no run named {name!r}")
        return found | {"benchmark": bench_of_run(reader, name)}

    @app.get("/api/runs/{name}/episodes/{episode}")
    def episode(name: str, episode: Id) -> JSONDict:
        found = reader.episode(name, episode)
        if found is None:
            raise HTTPException(404, f"run {name!r} has no episode {episode}")
        images = [{k: v for k, v in image.items() if k != "data"}
                  for image in reader.images(name, episode)]
        return found | {"images": images}

    @app.get("/api/runs/{name}/episodes/{episode}/images/{decision}/{camera}")
    def image(name: str, episode: Id, decision: Id, camera: str) -> Response:
        for found in reader.images(name, episode, decision):
            if found["camera"] == camera:
                return Response(found["data"], media_type=found["media_type"],
                                headers={"Cache-Control": "max-age=3600"})
        raise HTTPException(404, f"run {name!r} episode {episode} has no {camera!r} image "
                            f"at decision {decision}")

    @app.get("/api/runs/{name}/episodes/{episode}/world")
    def world(name: str, episode: Id) -> JSONDict:
        found = reader.world(name, episode)
        if found is None:
            raise HTTPException(404, f"run {name!r} episode {episode} has no recorded world")
        return found

    @app.get("/api/runs/{name}/episodes/{episode}/video")
    def video(name: str, episode: Id, kind: str = "schematic") -> Response:
        return episode_video(reader, name, episode, kind)

    @app.get("/api/benchmarks/{name}")
    def benchmark(name: str, compare: list[str] = Query(default=[]),  # noqa: B008
                  price_per_mtok: float | None = Query(default=None, ge=0, le=1e9,
                                                             allow_inf_nan=False)) -> JSONDict:
        found = bench_page(reader, name, compare, price_per_mtok)
        if found is None:
            raise HTTPException(404, f"no benchmark run named {name!r}")
        return found

    @app.get("/api/generations/{name}")
    def generation(name: str) -> JSONDict:
        found = generation_tree(reader, name)
        if found is None:
            raise HTTPException(404, f"no generation named {name!r}")
        return found

    @app.get("/api/generations/{name}/{kind}/{node}")
    def generation_node(name: str, kind: str, node: Id) -> JSONDict:
        if kind not in ("situation", "candidate"):
            raise HTTPException(404, f"unknown node kind {kind!r}: situation or candidate")
        found = node_detail(reader, name, kind, node)
        if found is None:
            raise HTTPException(404, f"generation {name!r} has no {kind} {node}")
        return found

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
