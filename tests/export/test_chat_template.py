"""Chat rows rendered through a chat template (``export --chat-template``): the shipped
tool-aware ChatML keeps every call and result; a template that drops them is refused."""

from __future__ import annotations

import json

import pytest

from magma_core.export import ExportSettings, write_export
from magma_core.export.chat_template import SHIPPED, ChatTemplate, ChatTemplateError
from magma_core.export.writers import chat_rows

from .test_export import forest

#: SmolLM2-style: only each message's content, so tool calls render as empty turns
CONTENT_ONLY = ("{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
                "<|im_end|>\n{% endfor %}")


def test_the_shipped_template_keeps_every_call_and_result():
    (_, row), = chat_rows(forest(), ExportSettings(chat_template="chatml-tools"))
    text = row["text"]
    assert text.startswith("<|im_start|>system\n") and "You may call tools" in text
    assert '<tool_call>\n{"name": "pick", "arguments": {"object": "cube"}}\n</tool_call>' in text
    assert "<tool_response>" in text and text.count("<|im_start|>assistant") == 2
    assert '"name": "place"' in text and "generation" not in text  # the markers leave no trace
    assert "{% generation %}" in SHIPPED["chatml-tools"].read_text()  # for assistant-only loss


def test_a_template_that_drops_tool_calls_is_refused_with_the_reason(tmp_path):
    tokenizer = tmp_path / "tokenizer"
    tokenizer.mkdir()
    (tokenizer / "tokenizer_config.json").write_text(json.dumps({"chat_template": CONTENT_ONLY}))
    ok, reason = ChatTemplate(str(tokenizer)).render(chat_rows(forest(), ExportSettings())[0][1])
    assert ok is None and reason == "the template drops tool call 'pick' of message 2"
    report = write_export(forest(trees=2), ExportSettings(chat_template=str(tokenizer)), tmp_path / "out")
    assert report.rows == {"train": 0, "validation": 0}
    assert any("2 rows refused by chat template" in w and "drops tool call 'pick'" in w for w in report.warnings)
    (tmp_path / "t.jinja").write_text("{% for m in messages %}{{ m.content }}{% endfor %")
    with pytest.raises(ChatTemplateError, match="does not compile"):
        ChatTemplate(str(tmp_path / "t.jinja"))
    with pytest.raises(ChatTemplateError, match="holds no chat_template"):
        (tmp_path / "empty").mkdir()
        (tmp_path / "empty" / "tokenizer_config.json").write_text("{}")
        ChatTemplate(str(tmp_path / "empty"))


def test_a_template_is_sandboxed_data():
    """Nothing in a template reaches Python: attribute tricks fail, the row is refused."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "evil.jinja"
        path.write_text("{{ ''.__class__.__mro__[1].__subclasses__() }}")
        text, reason = ChatTemplate(str(path)).render(chat_rows(forest(), ExportSettings())[0][1])
    assert text is None and "fails on this row" in reason
