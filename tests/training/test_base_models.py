"""The training recipe's base models (``examples/training/gguf_model.py``): each names a shipped
tool template whose call marker the bench knows, a tuned folder's base is read back from its
``config.json`` (so it is served with the template it was trained with), and an unknown base
is refused in one line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "training"))

import gguf_model  # noqa: E402

from magma_core.agents.stage_decoding import CALL_PREFILLS  # noqa: E402
from magma_core.export.chat_template import SHIPPED  # noqa: E402


def test_every_base_names_a_shipped_template_with_a_known_call_marker():
    assert set(gguf_model.BASE_MODELS) == {"smollm2", "gemma3"}
    for model in gguf_model.BASE_MODELS.values():
        assert model.template in SHIPPED and model.template in CALL_PREFILLS
        assert gguf_model.chat_template(model.name) == SHIPPED[model.template].read_text()
    assert gguf_model.BASE_MODELS["gemma3"].template == "gemma-tools"


def test_a_tuned_folders_base_is_read_from_its_config(tmp_path):
    gemma, smol, other, empty = (tmp_path / name for name in ("gemma", "smol", "other", "empty"))
    for folder, model_type in ((gemma, "gemma3_text"), (smol, "llama"), (other, "qwen2")):
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps({"model_type": model_type}))
    empty.mkdir()
    assert gguf_model.base_of(gemma).name == "gemma3"
    assert gguf_model.base_of(smol, "gemma3").name == "smollm2"  # the folder's, not the default's
    assert gguf_model.base_of(other).name == gguf_model.base_of(empty).name == "smollm2"
    assert gguf_model.base_of("base", "gemma3").name == "gemma3"
    assert gguf_model.base_of("base").name == "smollm2"


def test_an_unknown_base_is_refused_in_one_line():
    with pytest.raises(SystemExit, match="unknown base model 'llama9'; known: smollm2, gemma3"):
        gguf_model.base_model("llama9")
