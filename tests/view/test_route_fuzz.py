"""The viewer's API routes fuzzed on a real loopback server over a real store: names, ids
(beyond SQLite's integer range, negative, not numbers), node kinds, item kinds, compare lists
and prices (nan, inf, 1e999) drawn by Hypothesis. No answer is a 5xx; every refusal is short
JSON with a reason. A broken store answers 503 with the store's one-line reason.

The regular suite sends 600 requests (100 examples of six); ``-m slow`` thirty times more.
"""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import ViewerServer

pytestmark = [pytest.mark.sim, pytest.mark.filterwarnings("ignore")]

NAMES = st.one_of(st.sampled_from(["sorting", "machine", "stuck", "x" * 5000, "..", "%00"]),
                  st.text(min_size=1, max_size=40))
IDS = st.one_of(st.integers(), st.sampled_from([2**63, -(2**63) - 1, 10**30]).map(str),
                st.sampled_from(["nan", "1e999", "-0", "0x10", "", " 1"]), st.text(max_size=8))
PRICES = st.one_of(st.floats().map(repr), st.sampled_from(["nan", "inf", "-inf", "1e999", "x"]))


@pytest.fixture(scope="module")
def api(viewer_store):
    with ViewerServer(viewer_store) as server:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            yield client


def check(reply: httpx.Response) -> None:
    assert reply.status_code < 500, (reply.request.url, reply.status_code, reply.text[:300])
    if reply.status_code >= 400:
        assert len(reply.content) < 10_000 and "Traceback" not in reply.text
        assert "detail" in reply.json()


def test_named_bad_requests_are_4xx(api):
    assert api.get(f"/api/runs/sorting/episodes/{2**63}").status_code == 422
    assert api.get(f"/api/runs/sorting/episodes/{10**30}/world").status_code == 422
    assert api.get("/api/generations/g/candidate/99999999999999999999").status_code == 422
    assert api.get("/api/benchmarks/b", params={"price_per_mtok": "inf"}).status_code == 422
    reply = api.get("/api/runs/" + "x" * 50_000)
    assert reply.status_code == 404 and len(reply.content) < 2000


@pytest.mark.parametrize("examples", [100, pytest.param(3000, marks=pytest.mark.slow)])
def test_fuzzed_requests_never_get_a_5xx(api, examples):
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(name=NAMES, episode=IDS, kind=st.text(max_size=12), price=PRICES,
           compare=st.lists(NAMES, max_size=3))
    def run(name, episode, kind, price, compare):
        n, e = quote(name, safe=""), quote(str(episode), safe="")
        check(api.get(f"/api/runs/{n}"))
        check(api.get(f"/api/runs/{n}/episodes/{e}"))
        check(api.get(f"/api/runs/{n}/episodes/{e}/world"))
        check(api.get(f"/api/generations/{n}/{quote(kind, safe='') or 'x'}/{e}"))
        check(api.get(f"/api/benchmarks/{n}", params={"compare": compare, "price_per_mtok": price}))
        check(api.get("/api/items", params={"kind": kind}))

    run()


def test_a_broken_store_is_a_503_that_says_what_is_wrong(tmp_path):
    with ViewerServer(tmp_path) as server, httpx.Client(base_url=server.url, timeout=10) as client:
        (tmp_path / "magma.db").write_bytes(b"this is not a database, just bytes" * 100)
        for path in ("/api/items", "/api/runs/r", "/api/runs/r/episodes/0"):
            reply = client.get(path)
            assert reply.status_code == 503, (path, reply.text)
            assert "is not a MAGMA store" in reply.json()["detail"]
