"""Serving a model with llama.cpp's server (``magma serve-model``) without starting one: the
command line, the weights checks, ``--call-prefill`` requests, and the model identity a bench run records
(probed from a real loopback HTTP server answering as llama-server does)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from magma_core.agents.model_identity import (
    check_same_weights,
    describe,
    probe,
    weights_digest,
    with_identity,
)
from magma_core.agents.model_server import (
    ModelServerError,
    ServerPlan,
    prepare_weights,
)
from magma_core.bench.report import identity_line
from magma_core.user_error import UserError

from .agent_helpers import completion, tool_call
from .test_stage_decoding import _agent, _request


def test_the_command_line_and_the_weights_checks(tmp_path):
    server = tmp_path / "llama-server"
    server.write_text("#!/bin/sh\n")
    server.chmod(0o755)
    plan = ServerPlan(gguf=tmp_path / "m.gguf", alias="m", port=8099, slots=3, ctx_per_slot=1000, threads=2,
                      template_file=tmp_path / "t.jinja", server_bin=server)
    command = plan.command()
    assert command[0] == str(server) and plan.agent_spec == "openai:m@http://127.0.0.1:8099/v1"
    for flag, value in (("--parallel", "3"), ("--ctx-size", "3000"), ("--host", "127.0.0.1"),
                        ("--chat-template-file", str(tmp_path / "t.jinja"))):
        assert command[command.index(flag) + 1] == value
    assert "--jinja" in command and "--cache-prompt" in command
    gguf = tmp_path / "x.gguf"
    gguf.write_bytes(b"GGUF")
    assert prepare_weights(gguf, tmp_path / "work") == gguf.resolve()
    with pytest.raises(ModelServerError, match="neither a .gguf file nor a model folder"):
        prepare_weights(tmp_path / "missing", tmp_path / "work")
    with pytest.raises(UserError, match="--quantize must be one of"):
        prepare_weights(gguf, tmp_path / "work", quantize="q3")


def test_call_prefill_starts_an_action_reply_at_the_call_marker(fake_openai):
    fake_openai.script = [completion(tool_calls=[tool_call("pick", {"object_name": "cup"})])]
    agent = _agent(fake_openai, call_prefill="chatml-tools")
    out = agent.respond(_request("action"))[0]
    assert out.status == "completed" and out.output.tool_calls[0].name == "pick"
    sent = fake_openai.requests[-1]
    assert sent["messages"][-1] == {"role": "assistant", "content": "<tool_call>\n"}
    assert sent["continue_final_message"] is True and sent["add_generation_prompt"] is False
    assert sent["tool_choice"] == "required" and sent["stop"] == ["</tool_call>"]
    assert sent["parallel_tool_calls"] is False
    history = out.memory["history"]
    assert history[-1]["role"] == "assistant" and history[-1]["tool_calls"]  # the prefill is not kept
    assert all(m.get("content") != "<tool_call>\n" for m in history)
    agent.respond(_request("action", ["wait"]))  # one callable tool: required, not named
    assert fake_openai.requests[-1]["tool_choice"] == "required"
    fake_openai.script = [completion("Done.")]
    agent.respond(_request("text_only", []))  # no tools, no prefill
    answer = fake_openai.requests[-1]
    assert answer["messages"][-1]["role"] != "assistant" and "continue_final_message" not in answer


class _Props(BaseHTTPRequestHandler):
    weights = ""

    def log_message(self, *args):
        return

    def do_GET(self):  # noqa: N802
        if self.path == "/v1/models":
            body = {"data": [{"id": "m", "owned_by": "llamacpp", "meta": {"n_params": 7, "ftype": "Q4_1"}}]}
        elif self.path == "/props":
            body = {"build_info": "b11434-x", "total_slots": 4, "model_path": self.weights, "chat_template": "T"}
        else:
            self.send_response(404)
            self.end_headers()
            return
        raw = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def test_a_bench_run_records_the_served_weights_and_the_report_shows_them(tmp_path):
    weights = tmp_path / "w.gguf"
    weights.write_bytes(b"weights" * 1000)
    _Props.weights = str(weights)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Props)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        identity = probe(f"http://127.0.0.1:{server.server_address[1]}/v1", "m")
    finally:
        server.shutdown()
        server.server_close()
    digest = weights_digest(weights)
    assert identity["engine"] == "llama.cpp" and identity["version"] == "b11434-x" and identity["slots"] == 4
    assert identity["weights"] == digest and digest["bytes"] == 7000 and len(digest["sha256"]) == 64
    assert probe("http://127.0.0.1:9/v1", "m", timeout=1) == {"probe": "unreachable"}
    config = with_identity({"agent": "openai:m", "model": {"name": "m"}}, identity)
    assert config["model"]["identity"]["weights"]["sha256"] == digest["sha256"]
    line = identity_line({"agent": {"model": config["model"]}})
    assert line.startswith("  model identity: llama.cpp b11434-x; weights w.gguf sha256 " + digest["sha256"][:12])
    check_same_weights({"config": config}, identity, "b")  # the same weights: resumes
    weights.write_bytes(b"other")
    with pytest.raises(UserError, match="was started with model weights sha256"):
        check_same_weights({"config": config}, {"weights": weights_digest(weights)}, "b")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a").write_text("1")
    first = weights_digest(folder)["sha256"]
    (folder / "a").write_text("2")
    assert weights_digest(folder)["sha256"] != first and weights_digest(tmp_path / "none") is None


def test_model_server_module_needs_no_simulator():
    import magma_core.agents.model_server as module

    assert "mani_skill" not in Path(module.__file__).read_text()


def test_a_run_records_the_model_identity_and_refuses_other_weights_on_resume(tmp_path):
    from magma_core.runs import RunSpec
    from magma_core.runs.entry import _open_run
    from magma_core.store import open_store

    spec = RunSpec("cube.PickPlace", agent="openai:m@http://127.0.0.1:9/v1", out=tmp_path, name="r",
                   agent_options={"temperature": 0.0})
    identity = {"engine": "llama.cpp", "version": "b1", "weights": {"path": "/w.gguf", "sha256": "a" * 64}}
    with open_store(tmp_path) as store:
        assert _open_run(spec, store, identity) == ("r", 0)
        model = store.get_run("r")["config"]["model"]
    # the identity beside the decoding options, as a bench run records it
    assert model["identity"] == identity and model["options"] == {"temperature": 0.0}
    with open_store(tmp_path) as store:
        _open_run(spec, store, identity)  # the same weights (nothing finished yet either way)
        _open_run(spec, store, None)  # a server that tells nothing: not refused
    stored = {"config": {"model": model}}
    other = {"weights": {"sha256": "b" * 64}}
    with pytest.raises(UserError, match=r"^run 'r' was started with model weights sha256 aaaaaaaaaaaa"):
        check_same_weights(stored, other, "r", what="run")
    assert describe(identity) == "llama.cpp b1; weights w.gguf sha256 aaaaaaaaaaaa"


def test_a_folder_dequantised_from_a_gguf_converts_without_the_note(tmp_path):
    from magma_core.agents.model_server import _convertible

    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "config.json").write_text(json.dumps({"model_type": "llama"}))
    assert _convertible(plain, tmp_path / "work") == plain  # nothing to leave out: read as it is
    tuned = tmp_path / "tuned"
    tuned.mkdir()
    config = {"model_type": "llama", "quantization_config": {"quant_method": "gguf", "gguf_file": "m.gguf"}}
    (tuned / "config.json").write_text(json.dumps(config))
    (tuned / "model.safetensors").write_bytes(b"tensors")
    staged = _convertible(tuned, tmp_path / "work")
    assert staged.parent == tmp_path / "work" and json.loads((staged / "config.json").read_text()) == {
        "model_type": "llama"}
    assert (staged / "model.safetensors").resolve() == (tuned / "model.safetensors").resolve()
    assert json.loads((tuned / "config.json").read_text()) == config  # the folder itself untouched
    assert _convertible(tuned, tmp_path / "work") == staged  # made again from scratch, same place


def test_the_server_threads_leave_the_simulator_a_core_and_wait_passively(monkeypatch):
    from magma_core.agents import model_server

    monkeypatch.setattr(model_server.os, "cpu_count", lambda: 2)
    assert model_server.default_threads() == 1
    monkeypatch.setattr(model_server.os, "cpu_count", lambda: 16)
    assert model_server.default_threads() == 8
    plan = ServerPlan(gguf=Path("m.gguf"), alias="m", server_bin=Path("/bin/true"))
    assert plan.command()[plan.command().index("--threads") + 1] == "8"
    assert model_server.server_env({})["OMP_WAIT_POLICY"] == "PASSIVE"
    assert model_server.server_env({"OMP_WAIT_POLICY": "ACTIVE"})["OMP_WAIT_POLICY"] == "ACTIVE"  # the user's kept


def test_a_resumed_run_or_bench_may_find_its_loopback_server_on_another_port(tmp_path):
    """A local server takes a free port at each start: a resume compares the agent without a
    loopback port (the weights digest says whether the model is the same), any other change
    of endpoint, alias or remote port is still refused in one line."""
    from magma_core.agents.model_identity import resume_form
    from magma_core.runs.spec import check_resume
    from magma_core.store.bench_store import BenchStore

    assert resume_form("openai:m@http://127.0.0.1:9/v1") == resume_form("openai:m@http://127.0.0.1:10/v1")
    assert resume_form("openai:m@http://gpu1:8000/v1") == "openai:m@http://gpu1:8000/v1"
    assert resume_form("trace") == "trace" and resume_form(None) is None
    stored = {"agent": "openai:m@http://127.0.0.1:9/v1", "seed": 0}
    check_resume(stored, stored | {"agent": "openai:m@http://127.0.0.1:4711/v1"}, "r")
    for other in ("openai:n@http://127.0.0.1:9/v1", "openai:m@http://gpu1:9/v1", "trace"):
        with pytest.raises(UserError, match=r"^run 'r' was started with --agent"):
            check_resume(stored, stored | {"agent": other}, "r")
    bench = BenchStore(tmp_path / "bench.db")
    try:
        config = {"agent": "openai:m@http://127.0.0.1:9/v1", "judge": None, "trials": 1, "seed": 0}
        assert bench.open_bench("b", "s", "f" * 12, config) is False
        assert bench.open_bench("b", "s", "f" * 12, config | {"agent": "openai:m@http://127.0.0.1:10/v1"})
        with pytest.raises(UserError, match=r"^benchmark run 'b' was started with --agent"):
            bench.open_bench("b", "s", "f" * 12, config | {"agent": "openai:m@http://10.0.0.2:9/v1"})
    finally:
        bench.close()
