"""A wrong assistant turn kept in the context (``"weight": 0``, OpenAI's fine-tuning
convention: mistake -> feedback -> fix) is rendered by the shipped tool-aware template as the
same text, outside the ``{% generation %}`` markers, so an assistant-only loss leaves it out;
the turns without the key (weight 1) stay inside. Rendered here with Jinja and the export's own
template code; the opt-in ``tests/rl_trainers/test_masked_turns_trl.py`` checks transformers'
assistant mask and TRL's prepared labels."""

from __future__ import annotations

import copy
import json
import re

from jinja2.sandbox import ImmutableSandboxedEnvironment

from magma_core.agents.model_server import server_template
from magma_core.export import ExportSettings
from magma_core.export.chat_template import SHIPPED, ChatTemplate
from magma_core.export.writers import chat_rows

from .test_export import forest

START, END = "\x02", "\x03"  # the generation spans made visible: characters no row holds


def _environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = lambda value, indent=None: json.dumps(value, ensure_ascii=False, indent=indent)
    return env


def _spans_template():
    """The shipped template with each ``{% generation %}`` span opened by START and closed by END."""
    text = SHIPPED["chatml-tools"].read_text()
    text = re.sub(r"\{%-\s*generation\s*-%\}", lambda _: "{{- '\\x02' -}}", text)
    text = re.sub(r"\{%-\s*endgeneration\s*-%\}", lambda _: "{{- '\\x03' -}}", text)
    assert text.count("\\x02") == 1 and text.count("\\x03") == 1
    return _environment().from_string(text)


def _trained_and_masked(marked: str) -> tuple[str, str]:
    """(the text inside the spans, the text outside them)."""
    inside, outside, depth = [], [], 0
    for char in marked:
        if char in (START, END):
            depth += 1 if char == START else -1
            assert depth in (0, 1), "nested or unbalanced generation spans"
            continue
        (inside if depth else outside).append(char)
    assert depth == 0
    return "".join(inside), "".join(outside)


def mistake_row(weight_key: bool = True) -> dict:
    """An exported row with a wrong call (place in zone_b), the environment's report and
    the fix inserted before the correct place: mistake -> feedback -> fix."""
    (_, row), = chat_rows(forest(), ExportSettings())
    row = copy.deepcopy(row)
    messages = row["messages"]
    fix = messages[4]
    assert fix["role"] == "assistant" and fix["tool_calls"][0]["function"]["name"] == "place"
    wrong = {"role": "assistant", "content": "",
             "tool_calls": [{"id": "call_wrong", "type": "function",
                             "function": {"name": "place", "arguments": '{"area": "zone_wrong"}'}}]}
    if weight_key:
        wrong["weight"] = 0
    feedback = {"role": "tool", "tool_call_id": "call_wrong", "content": "zone_wrong is not an area: REPORT"}
    row["messages"] = messages[:4] + [wrong, feedback] + messages[4:]
    return row


WRONG_CALL = '{"name": "place", "arguments": {"area": "zone_wrong"}}'
FIX_CALL = '{"name": "place", "arguments": {"area": "zone_a"}}'


def test_the_weight_0_turn_falls_outside_the_generation_spans_and_the_fix_inside():
    row = mistake_row()
    marked = _spans_template().render(messages=row["messages"], tools=row["tools"], add_generation_prompt=False)
    trained, masked = _trained_and_masked(marked)
    assert WRONG_CALL in masked and WRONG_CALL not in trained
    assert FIX_CALL in trained and FIX_CALL not in masked
    assert '"name": "pick"' in trained  # the other assistant turns still trained
    assert "REPORT" in masked  # the feedback is context, never trained
    # the masked turn's whole assistant body (call and end-of-turn) is outside the spans
    assert f"<|im_start|>assistant\n<tool_call>\n{WRONG_CALL}\n</tool_call><|im_end|>\n" in masked
    assert trained.count("<|im_end|>") == 2  # pick and the fix, each with its end-of-turn


def test_the_text_is_byte_identical_with_or_without_the_weight_key():
    weighted, plain = mistake_row(), mistake_row(weight_key=False)
    template = ChatTemplate("chatml-tools")
    text, reason = template.render(weighted)
    same, again = template.render(plain)
    assert reason is None and again is None and text == same
    ones = copy.deepcopy(weighted)
    ones["messages"][4]["weight"] = 1
    assert template.render(ones)[0] == text
    nulls = copy.deepcopy(plain)  # what `datasets` gives the turns without the key: weight None
    for message in nulls["messages"]:
        message.setdefault("weight", None)
    assert template.render(nulls)[0] == text
    marked = _spans_template()
    render = lambda r: marked.render(messages=r["messages"], tools=r["tools"], add_generation_prompt=False)  # noqa: E731
    assert _trained_and_masked(render(nulls)) == _trained_and_masked(render(plain))
    assert WRONG_CALL in _trained_and_masked(render(plain))[0]  # without the key it is trained
    assert WRONG_CALL in _trained_and_masked(render(ones))[0]


def test_the_server_template_renders_a_masked_row_as_the_trainer_does():
    row = mistake_row()
    served = _environment().from_string(server_template(SHIPPED["chatml-tools"].read_text()))
    text, reason = ChatTemplate("chatml-tools").render(row)
    assert reason is None
    assert served.render(messages=row["messages"], tools=row["tools"], add_generation_prompt=False) == text
    prompt = served.render(messages=row["messages"][:-1], tools=row["tools"], add_generation_prompt=True)
    assert text.startswith(prompt)
