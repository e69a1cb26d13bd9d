"""Chat rows rendered through a chat template (``export --chat-template``): the shipped
tool-aware ChatML keeps every call and result; a template that drops them is refused."""

from __future__ import annotations

import json
from pathlib import Path

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


QWEN = Path(__file__).resolve().parents[1] / "fixtures" / "chat_templates" / "qwen2_5_instruct.jinja"


def test_a_qwen_style_template_double_encodes_string_arguments_and_the_check_sees_it():
    """Qwen2.5-Instruct's template (the one the training guide gives TRL) writes
    ``tool_call.arguments | tojson``: the OpenAI format's JSON-string arguments come out as a
    string inside the JSON. The check catches it; the row is rendered with objects instead."""
    (_, row), = chat_rows(forest(), ExportSettings())
    template = ChatTemplate(str(QWEN))
    text, reason = template._checked(row)
    assert text is None and reason.startswith("the template renders the arguments other than as a JSON object")
    assert "tool call 'pick' of message 2" in reason
    text, reason = template.render(row)
    assert reason is None and template.objects_used == 1
    assert '<tool_call>\n{"name": "pick", "arguments": {"object": "cube"}}\n</tool_call>' in text
    assert '\\"object\\"' not in text
    assert '"name": "pick"' in text.split("\n</tools>")[0]  # the tools rendered with transformers' tojson


def test_a_template_that_double_encodes_objects_too_is_refused(tmp_path):
    twice = QWEN.read_text().replace("tool_call.arguments | tojson", "tool_call.arguments | tojson | tojson")
    (tmp_path / "twice.jinja").write_text(twice)
    (_, row), = chat_rows(forest(), ExportSettings())
    text, reason = ChatTemplate(str(tmp_path / "twice.jinja")).render(row)
    assert text is None and "other than as a JSON object" in reason


def test_an_export_through_the_qwen_template_says_it_rendered_objects(tmp_path):
    report = write_export(forest(trees=2), ExportSettings(chat_template=str(QWEN)), tmp_path / "out")
    assert sum(report.rows.values()) == 2
    assert any("double-encodes string tool-call arguments" in w and "2 row(s)" in w for w in report.warnings)
