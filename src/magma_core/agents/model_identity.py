"""What model a run talks to: the weights (a digest), the engine and its version, as the
server says, so that two results are compared only when they should be.

:func:`probe` asks an OpenAI-compatible server once, before a run starts, what it serves:
``GET /v1/models`` (every server; ``owned_by`` names llama.cpp's ``llamacpp`` and vLLM's
``vllm``, vLLM's ``root`` is the weights' folder, llama.cpp's ``meta`` their size), llama.cpp's
``GET /props`` (``model_path``, ``build_info``, the chat template) and vLLM's ``GET /version``.
When the weights' path the server reports is a file or folder on this machine (a server on
loopback), its SHA-256 (:func:`weights_digest`) is recorded too. Nothing here raises: an
unreachable or silent server gives ``{"probe": "unreachable"}`` or fewer facts, and the run's
own agent check then says what is wrong.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from magma_core.json_types import JSONDict, JSONValue
from magma_core.user_error import UserError

__all__ = ["ENGINES", "check_same_weights", "describe", "probe", "resume_form", "text_digest", "weights_digest",
           "with_identity"]

#: ``owned_by`` of ``GET /v1/models`` -> the engine's name
ENGINES = {"llamacpp": "llama.cpp", "vllm": "vllm"}
PROBE_TIMEOUT_S = 5.0
_CHUNK = 1 << 20
_digests: dict[tuple[str, int, int], str] = {}  # (path, size, mtime_ns) -> digest, per process


def weights_digest(path: str | Path) -> JSONDict | None:
    """``{"path", "sha256", "bytes"}`` of a weights file, or of a folder (every file under it,
    in sorted order, its relative name and content hashed); None when ``path`` is neither."""
    path = Path(path)
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file())
    else:
        return None
    total = hashlib.sha256()
    size = 0
    for file in files:
        stat = file.stat()
        key = (str(file.resolve()), stat.st_size, stat.st_mtime_ns)
        if key not in _digests:
            one = hashlib.sha256()
            with open(file, "rb") as handle:
                while chunk := handle.read(_CHUNK):
                    one.update(chunk)
            _digests[key] = one.hexdigest()
        size += stat.st_size
        if path.is_file():
            return {"path": str(path.resolve()), "sha256": _digests[key], "bytes": size}
        total.update(f"{file.relative_to(path).as_posix()}\0{_digests[key]}\n".encode())
    return {"path": str(path.resolve()), "sha256": total.hexdigest(), "bytes": size}


def text_digest(text: str) -> str:
    """The SHA-256 of ``text`` (a chat template)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _get(client: httpx.Client, url: str) -> JSONValue:
    try:
        response = client.get(url)
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def _local(base_url: str) -> bool:
    host = urlsplit(base_url).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


def probe(base_url: str, model: str, api_key_env: str | None = "OPENAI_API_KEY",
          timeout: float = PROBE_TIMEOUT_S) -> JSONDict:
    """The identity of ``model`` as the server at ``base_url`` (``.../v1``) reports it:
    ``engine``, ``version``, ``served_model``, ``weights`` (path, sha256, bytes; the digest
    only for a server on this machine whose weights path exists here), ``chat_template_sha256``
    and ``slots`` where the server tells them; ``{"probe": "unreachable"}`` when it does not
    answer ``GET /models``."""
    key = os.environ.get(api_key_env) if api_key_env else None
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    root = base_url.rstrip("/").removesuffix("/v1")
    with httpx.Client(timeout=timeout, headers=headers) as client:
        listing = _get(client, f"{base_url.rstrip('/')}/models")
        if not isinstance(listing, dict):
            return {"probe": "unreachable"}
        entries = [e for e in listing.get("data") or [] if isinstance(e, dict)]
        entry = next((e for e in entries if e.get("id") == model), entries[0] if entries else {})
        owner = entry.get("owned_by")
        facts: JSONDict = {"engine": ENGINES.get(owner, owner or "unknown"),
                                 "served_model": entry.get("id")}
        weights_path = entry.get("root") if owner == "vllm" else None
        if owner == "llamacpp":
            props = _get(client, f"{root}/props")
            if isinstance(props, dict):
                facts["version"] = props.get("build_info")
                facts["slots"] = props.get("total_slots")
                weights_path = props.get("model_path")
                if isinstance(props.get("chat_template"), str):
                    facts["chat_template_sha256"] = text_digest(props["chat_template"])
            meta = entry.get("meta")
            if isinstance(meta, dict):
                facts["weights_meta"] = {k: meta[k] for k in ("n_params", "size", "ftype") if k in meta}
        elif owner == "vllm":
            version = _get(client, f"{root}/version")
            if isinstance(version, dict):
                facts["version"] = version.get("version")
    if isinstance(weights_path, str) and weights_path:
        digest = weights_digest(weights_path) if _local(base_url) else None
        facts["weights"] = digest or {"path": weights_path}
    return {k: v for k, v in facts.items() if v is not None}


def with_identity(config: JSONDict, identity: JSONDict | None) -> JSONDict:
    """A run's ``config`` with the model's identity (engine, version, weights digest) under
    ``model.identity``, beside the decoding options ``model.options``; unchanged when the
    server told nothing (or ``config`` names no model)."""
    if not identity or identity.get("probe") == "unreachable" or "model" not in config:
        return config
    return config | {"model": config["model"] | {"identity": identity}}


def resume_form(spec: JSONValue) -> JSONValue:
    """An agent or judge spec as a resumed run compares it: every ``openai:MODEL@URL`` whose URL
    is on loopback without its port (a local server takes a free port at each start, and whether
    it serves the same weights is :func:`check_same_weights`'s to say); anything else unchanged."""
    if not isinstance(spec, str) or "openai:" not in spec:
        return spec
    return ",".join(_without_loopback_port(part) for part in spec.split(","))


def _without_loopback_port(part: str) -> str:
    head, sep, base_url = part.rpartition("@")
    if not sep or not head.strip().startswith("openai:") or not _local(base_url):
        return part
    try:
        split = urlsplit(base_url)
        port = split.port
    except ValueError:  # a port that is no number: compared as written
        return part
    if port is None:
        return part
    host = split.netloc.rsplit(":", 1)[0]
    return f"{head}{sep}{split._replace(netloc=f'{host}:PORT').geturl()}"


def check_same_weights(stored: JSONDict | None, identity: JSONDict | None, name: str,
                       what: str = "benchmark run") -> None:
    """A resumed run (``stored``: its stored row, ``config`` in it) must talk to the same
    weights it started with, when both digests are known: one line otherwise."""
    before = (((stored or {}).get("config") or {}).get("model") or {}).get("identity") or {}
    old = (before.get("weights") or {}).get("sha256")
    new = ((identity or {}).get("weights") or {}).get("sha256")
    if old and new and old != new:
        raise UserError(f"{what} {name!r} was started with model weights sha256 {old[:12]}, "
                        f"the server now serves {new[:12]}; resume with the same weights or another --name")


def describe(identity: JSONDict | None) -> str | None:
    """``ENGINE VERSION; weights NAME sha256 DIGEST (SIZE); chat template sha256 ...; N server
    slots`` for a recorded identity (None without one)."""
    if not identity or identity.get("probe") == "unreachable":
        return None
    parts = [" ".join(str(identity[k]) for k in ("engine", "version") if identity.get(k))]
    weights = identity.get("weights") or {}
    if weights.get("path"):
        shown = f"weights {Path(str(weights['path'])).name}"
        if weights.get("sha256"):
            shown += f" sha256 {str(weights['sha256'])[:12]}"
        if weights.get("bytes"):
            shown += f" ({weights['bytes'] / 1e6:.1f} MB)"
        parts.append(shown)
    if identity.get("chat_template_sha256"):
        parts.append(f"chat template sha256 {str(identity['chat_template_sha256'])[:12]}")
    if identity.get("slots"):
        parts.append(f"{identity['slots']} server slots")
    return "; ".join(p for p in parts if p)
