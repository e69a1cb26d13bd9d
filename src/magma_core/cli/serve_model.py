"""``magma serve-model MODEL``: serve a GGUF file or a tuned model folder with llama.cpp's
``llama-server`` on loopback, with the chat template its training rows were rendered with
(see :mod:`magma_core.agents.model_server`), and print the ``--agent`` spec and flags that
``magma run`` / ``magma bench run`` talk to it with. Runs in the foreground until Ctrl-C."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path

from magma_core.agents.model_server import (
    OUT_TYPES,
    QUANT_TYPES,
    ServerPlan,
    find_llama_server,
    prepare_weights,
    server_template,
    start,
    wait_ready,
)
from magma_core.agents.stage_decoding import CALL_PREFILLS
from magma_core.export.chat_template import SHIPPED, template_text


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("serve-model", help="serve a GGUF or a tuned model folder with llama-server (loopback)")
    parser.add_argument("model", help="a .gguf file, or a model folder written by save_pretrained")
    parser.add_argument("--alias", default=None, help="the model name it is served as (default: the file's stem)")
    parser.add_argument("--port", type=_positive, default=8080, help="port on 127.0.0.1 (default 8080)")
    parser.add_argument("--slots", type=_positive, default=4,
                        help="parallel slots, decoded together (default 4; match magma bench run --slots)")
    parser.add_argument("--ctx-per-slot", type=_positive, default=4096, help="context tokens per slot (default 4096)")
    parser.add_argument("--threads", type=int, default=0,
                        help="CPU threads (default: half the cores, the rest for the simulator)")
    parser.add_argument("--chat-template", default="chatml-tools",
                        help="chatml-tools (default: MAGMA's tool-aware ChatML, as exports render), "
                        "gemma-tools (the same in Gemma's turns), a template or tokenizer file/folder, "
                        "or 'model' for the GGUF's own")
    parser.add_argument("--outtype", choices=OUT_TYPES, default="f16", help="GGUF type of a converted folder (default f16)")
    parser.add_argument("--quantize", choices=QUANT_TYPES, default=None, help="quantise the GGUF with llama-quantize")
    parser.add_argument("--work-dir", default="runs/served-models",
                        help="where converted and quantised GGUFs and the template go (default runs/served-models)")
    parser.add_argument("--server-bin", default=None, help="the llama-server program (default: make llama-server's)")
    parser.set_defaults(func=run)


def plan_for(model: str | Path, work_dir: str | Path, *, alias: str | None = None, port: int = 8080,
             slots: int = 4, ctx_per_slot: int = 4096, threads: int = 0, chat_template: str = "chatml-tools",
             outtype: str = "f16", quantize: str | None = None, server_bin: str | Path | None = None,
             python: str | None = None) -> ServerPlan:
    """The server plan for ``model`` (a GGUF or a ``save_pretrained`` folder): the weights
    converted (``outtype``) and quantised into ``work_dir`` as needed, the chat template
    (``chatml-tools``, a template or tokenizer file/folder, or ``model`` for the GGUF's own)
    written there for the server; ``python`` runs the converter (default: this interpreter)."""
    server = find_llama_server(server_bin)
    work = Path(work_dir)
    gguf = prepare_weights(model, work, outtype=outtype, quantize=quantize, python=python, server_bin=server)
    template = None
    if chat_template != "model":
        work.mkdir(parents=True, exist_ok=True)
        name = chat_template if chat_template in SHIPPED else "template"
        template = (work / f"{name}.server.jinja").resolve()
        template.write_text(server_template(template_text(chat_template)), encoding="utf-8")
    return ServerPlan(gguf=gguf, alias=alias or gguf.stem, port=port, slots=slots, ctx_per_slot=ctx_per_slot,
                      threads=threads, template_file=template, server_bin=server)


def plan_from(args: argparse.Namespace) -> ServerPlan:
    """The server plan ``args`` describe (weights converted/quantised, template written)."""
    return plan_for(args.model, args.work_dir, alias=args.alias, port=args.port, slots=args.slots,
                    ctx_per_slot=args.ctx_per_slot, threads=args.threads, chat_template=args.chat_template,
                    outtype=args.outtype, quantize=args.quantize, server_bin=args.server_bin)


def run(args: argparse.Namespace) -> int:
    plan = plan_from(args)
    process = start(plan)
    try:
        wait_ready(plan, process)
        prefill = f" --call-prefill {args.chat_template}" if args.chat_template in CALL_PREFILLS else ""
        print(f"serving {plan.gguf} as {plan.alias} on {plan.base_url} ({plan.slots} slots)", flush=True)
        print(f"  magma bench run SUITE --agent {plan.agent_spec} --slots {plan.slots} --temperature 0{prefill}",
              flush=True)
        signal.signal(signal.SIGTERM, lambda *_: process.terminate())
        return process.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except Exception:
                process.kill()
