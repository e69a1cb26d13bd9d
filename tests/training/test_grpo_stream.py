"""train_grpo.py's token stream, without a model: a rollout's tokens are the opening prompt, the
model's own tokens and the environment's replies, and together they are exactly what MAGMA's
tool-aware template renders of the whole conversation, the loss mask on the model's tokens
alone (a character tokenizer with the two ChatML markers as single tokens stands in for the
model's; the template is the shipped one)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "training"))

import train_grpo  # noqa: E402

from magma_core.export.chat_template import ChatTemplate  # noqa: E402

SPECIAL = {"<|im_start|>": 1, "<|im_end|>": 2}
SPLIT = re.compile("(" + "|".join(re.escape(s) for s in SPECIAL) + ")")


class CharTokenizer:
    """Each character a token, the ChatML markers one token each (``<|im_end|>`` the EOS)."""

    eos_token, eos_token_id = "<|im_end|>", 2

    def __init__(self) -> None:
        self.template = ChatTemplate("chatml-tools").template

    def apply_chat_template(self, messages, tools=None, tokenize=False, add_generation_prompt=False):
        return self.template.render(messages=messages, tools=tools, add_generation_prompt=add_generation_prompt)

    def __call__(self, text, add_special_tokens=False):
        ids = []
        for part in SPLIT.split(text):
            ids += [SPECIAL[part]] if part in SPECIAL else [ord(c) + 10 for c in part]
        return {"input_ids": ids}

    def decode(self, ids, skip_special_tokens=False):
        names = {v: k for k, v in SPECIAL.items()}
        return "".join(names.get(i, "" if i in names else chr(i - 10)) for i in ids)


OPENING = [{"role": "system", "content": "You operate a robot."}, {"role": "user", "content": "Put the red cube in zone_a."}]
TOOLS = [{"type": "function", "function": {"name": "pick", "parameters": {"type": "object"}}}]
CALL = '<tool_call>\n{"name": "pick", "arguments": {"object": "red_cube"}}\n</tool_call>'
ENV = [{"role": "tool", "content": '{"infos": "Picked up red_cube."}'}, {"role": "user", "content": "Now place it."}]


@pytest.mark.parametrize("ended", [True, False], ids=["reply-ended", "reply-cut-at-max-tokens"])
def test_a_rollout_stream_is_the_rendered_conversation_and_only_the_model_tokens_are_trained(ended):
    tokenizer = CharTokenizer()
    stream = train_grpo.TokenStream(tokenizer, OPENING, TOOLS)
    assert stream.prompt_ids == tokenizer(tokenizer.apply_chat_template(OPENING, TOOLS, add_generation_prompt=True))["input_ids"]
    generated = tokenizer(CALL + ("<|im_end|>" if ended else ""))["input_ids"]
    assert stream.add_reply(generated) == CALL
    stream.add_env(ENV)
    second = tokenizer("Done.<|im_end|>")["input_ids"]
    stream.add_reply(second)
    conversation = [*OPENING, {"role": "assistant", "content": CALL}, *ENV, {"role": "assistant", "content": "Done."}]
    rendered = tokenizer.apply_chat_template(conversation, TOOLS)
    # the stream is what the template renders (less the newline after the last end-of-turn)
    assert tokenizer.decode(stream.ids) == rendered.removesuffix("\n")
    assert len(stream.env_mask) == len(stream.completion_ids)
    # the loss mask: 1 on the model's tokens, in order, and 0 on everything the env added
    trained = [t for t, m in zip(stream.completion_ids, stream.env_mask, strict=True) if m]
    assert trained == generated + second
    env_text = tokenizer.decode([t for t, m in zip(stream.completion_ids, stream.env_mask, strict=True) if not m])
    assert "Picked up red_cube." in env_text and "Now place it." in env_text
    assert env_text.startswith("\n" if ended else "<|im_end|>\n")  # the turn's end, once, from the right side
    assert env_text.endswith("<|im_start|>assistant\n")


def test_seed_ranges():
    assert train_grpo.seed_range("0-3") == [0, 1, 2, 3]
    assert train_grpo.seed_range("5,200-201") == [5, 200, 201]


SORTING_TOOLS = [
    {"type": "function", "function": {"name": "pick", "parameters": {"type": "object", "properties": {
        "object": {"type": "string", "enum": ["red_cube", "blue_cube"]}}}}},
    {"type": "function", "function": {"name": "detect_objects", "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {"name": "add_area", "parameters": {"type": "object", "properties": {
        "area": {"type": "string"}}}}},
]


def test_the_held_calls_are_every_enum_call_as_the_template_writes_it():
    texts = train_grpo.call_texts(SORTING_TOOLS)
    assert texts == ['<tool_call>\n{"name": "pick", "arguments": {"object": "red_cube"}}\n</tool_call>',
                     '<tool_call>\n{"name": "pick", "arguments": {"object": "blue_cube"}}\n</tool_call>',
                     '<tool_call>\n{"name": "detect_objects", "arguments": {}}\n</tool_call>']  # add_area: a free name
    rendered = CharTokenizer().apply_chat_template([{"role": "assistant", "content": None, "tool_calls": [
        {"function": {"name": "pick", "arguments": '{"object": "red_cube"}'}}]}])
    assert texts[0] in rendered  # what the rows trained on
    assert train_grpo.call_texts(SORTING_TOOLS[2:]) is None


def test_a_reply_is_free_until_it_starts_a_call_then_held_to_a_listed_call_and_its_end():
    tokenizer = CharTokenizer()
    trie = train_grpo.CallTrie(tokenizer, train_grpo.call_texts(SORTING_TOOLS))
    ids = lambda text: tokenizer(text)["input_ids"]  # noqa: E731
    assert tokenizer.decode(trie.trigger) == '<tool_call>\n{"name": "'
    assert trie.allowed(ids("I will look first. ")) is None  # free text
    assert trie.allowed(ids('<tool_call>\n{"name')) is None  # not yet the calls' common start
    after_name = trie.allowed(ids('Sure. <tool_call>\n{"name": "'))
    assert sorted(tokenizer.decode([t]) for t in after_name) == ["d", "p"]  # pick or detect_objects only
    assert trie.allowed(ids('<tool_call>\n{"name": "pick", "arguments": {"object": "')) == ids("r") + ids("b")
    done = ids('<tool_call>\n{"name": "pick", "arguments": {"object": "red_cube"}}\n</tool_call>')
    assert trie.allowed(done) == [tokenizer.eos_token_id]  # the turn ends after one call
    assert trie.allowed([*done, tokenizer.eos_token_id]) == [tokenizer.eos_token_id]
