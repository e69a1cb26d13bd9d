"""The chat template a model server is started with (``magma serve-model``) renders the
exported rows exactly as the trainer's template does: the same text, so the same token ids
under one tokenizer (the opt-in real-model test checks llama-server's own rendering and
tokenizer), and each turn's prompt is a prefix of the next (the server's prompt cache)."""

from __future__ import annotations

import json

from jinja2.sandbox import ImmutableSandboxedEnvironment

from magma_core.agents.model_server import server_template
from magma_core.export import ExportSettings
from magma_core.export.chat_template import SHIPPED, ChatTemplate
from magma_core.export.writers import chat_rows

from .test_export import forest


def test_the_server_template_renders_exported_rows_as_the_trainer_does():
    shipped = SHIPPED["chatml-tools"].read_text()
    served = server_template(shipped)
    assert "{%- generation" not in served and "endgeneration" not in served and served != shipped
    # a Jinja environment as transformers' and llama.cpp's (no {% generation %} extension,
    # tojson keeping key order, unescaped) compiles it and renders the same text
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = lambda value, indent=None: json.dumps(value, ensure_ascii=False, indent=indent)
    template = env.from_string(served)
    rows = [row for _, row in chat_rows(forest(trees=3), ExportSettings())]
    assert rows and any(m.get("tool_calls") for r in rows for m in r["messages"])
    trainer = ChatTemplate("chatml-tools")
    for row in rows:
        trained, reason = trainer.render(row)
        assert reason is None
        server_text = template.render(messages=row["messages"], tools=row.get("tools"), add_generation_prompt=False)
        assert server_text == trained
        # each turn's prompt is the next turn's prefix: the server's prompt cache can reuse it
        prompt = template.render(messages=row["messages"][:-1], tools=row.get("tools"), add_generation_prompt=True)
        assert trained.startswith(prompt)
        tools = row["tools"][0]
        assert json.dumps(tools, ensure_ascii=False) in trained  # the tools as given: keys in order
