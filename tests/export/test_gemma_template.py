"""The shipped ``gemma-tools`` template (Gemma 3's turns with MAGMA's tool format): every call
and result kept, the system text and the tools opening the first user turn (Gemma has no
system role), only Gemma's turn tokens (``<start_of_turn>``/``<end_of_turn>``, which its
vocabulary holds and llama-server stops at), the assistant-only spans on the model turns and
a ``"weight": 0`` turn outside them; the server's copy renders what the trainer renders."""

from __future__ import annotations

import re

from magma_core.agents.model_server import server_template
from magma_core.agents.stage_decoding import CALL_ENDS, CALL_PREFILLS
from magma_core.export import ExportSettings
from magma_core.export.chat_template import SHIPPED, ChatTemplate
from magma_core.export.writers import chat_rows

from .test_export import forest
from .test_masked_turns import (
    END,
    FIX_CALL,
    START,
    WRONG_CALL,
    _environment,
    _trained_and_masked,
    mistake_row,
)


def _spans_template():
    text = SHIPPED["gemma-tools"].read_text()
    text = re.sub(r"\{%-\s*generation\s*-%\}", lambda _: "{{- '\\x02' -}}", text)
    text = re.sub(r"\{%-\s*endgeneration\s*-%\}", lambda _: "{{- '\\x03' -}}", text)
    return _environment().from_string(text)


def test_gemma_tools_keeps_every_call_and_result_in_gemmas_turns():
    (_, row), = chat_rows(forest(), ExportSettings(chat_template="gemma-tools"))
    text = row["text"]
    system = row["messages"][0]
    assert system["role"] == "system"
    assert text.startswith("<start_of_turn>user\n" + system["content"] + "\n\nYou may call tools")
    assert '<tool_call>\n{"name": "pick", "arguments": {"object": "cube"}}\n</tool_call><end_of_turn>' in text
    assert "<tool_response>" in text and '"name": "place"' in text
    assert text.count("<start_of_turn>model\n") == sum(m["role"] == "assistant" for m in row["messages"])
    assert text.count("<start_of_turn>") == text.count("<end_of_turn>")
    assert "<|im_" not in text and "system" not in re.findall(r"<start_of_turn>(\w+)", text)
    # the first user message follows the system text in the same turn, once
    user = next(m for m in row["messages"] if m["role"] == "user")
    assert text.count(user["content"]) == 1 and text.count("You may call tools") == 1


def test_gemma_tools_trains_the_model_turns_and_leaves_a_weight_0_turn_out():
    row = mistake_row()
    marked = _spans_template().render(messages=row["messages"], tools=row["tools"], add_generation_prompt=False,
                                      bos_token="<bos>")
    assert marked.startswith("<bos><start_of_turn>user\n")
    trained, masked = _trained_and_masked(marked)
    assert WRONG_CALL in masked and WRONG_CALL not in trained
    assert FIX_CALL in trained and '"name": "pick"' in trained
    assert "REPORT" in masked and "<start_of_turn>" not in trained
    assert trained.count("<end_of_turn>") == sum(m["role"] == "assistant" and m.get("weight") != 0
                                                 for m in row["messages"])
    assert START not in masked and END not in trained


def test_the_gemma_server_template_renders_as_the_trainer_and_prompts_are_prefixes():
    served = _environment().from_string(server_template(SHIPPED["gemma-tools"].read_text()))
    trainer = ChatTemplate("gemma-tools")
    for _, row in chat_rows(forest(trees=3), ExportSettings()):
        text, reason = trainer.render(row)
        assert reason is None
        assert served.render(messages=row["messages"], tools=row["tools"], add_generation_prompt=False,
                             bos_token="") == text
        for end in [i for i, m in enumerate(row["messages"]) if m["role"] == "assistant"]:
            prompt = served.render(messages=row["messages"][:end], tools=row["tools"], add_generation_prompt=True,
                                   bos_token="")
            assert text.startswith(prompt) and prompt.endswith("<start_of_turn>model\n")


def test_gemma_tools_has_the_call_marker_of_chatml_tools():
    assert CALL_PREFILLS["gemma-tools"] == CALL_PREFILLS["chatml-tools"] == "<tool_call>\n"
    assert CALL_ENDS["gemma-tools"] == "</tool_call>"
