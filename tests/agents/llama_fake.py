"""A loopback chat-completions server shaped on llama-cpp-python's server with
``--chat_format chatml-function-calling`` (read from its chat handler), so the regular suite
meets what a local model server really does:

- without ``tool_choice`` (or with ``none``) the tools are not rendered into the prompt at all:
  the model only ever answers in text;
- the prompt template knows the roles system, user and assistant: a ``tool`` message's content
  is dropped;
- the template HTML-escapes everything it renders (``'`` -> ``&#39;``, ``"`` -> ``&#34;``) and
  the model answers in kind;
- without ``max_tokens`` a small model can run away: the reply only comes after ``runaway_s``;
  with it, generation stops at that many tokens (``finish_reason: length``).

``policy(prompt, body)`` plays the model: given the rendered prompt (what the model would
read) it returns ``("call", name, arguments_text)``, ``("say", text)`` or ``("runaway",)``.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Callable
from typing import Any

from .agent_helpers import ScriptedServer


def render(body: dict[str, Any]) -> str:
    """The prompt the model reads, as the chatml-function-calling template renders it."""
    tools_on = body.get("tool_choice") not in (None, "none") and bool(body.get("tools"))
    out = []
    for message in body["messages"]:
        role = message["role"]
        out.append(f"<|im_start|>{role}\n")
        content = html.escape(str(message.get("content") or ""), quote=True)
        if role == "system":
            out.append(content)
            if tools_on:
                out.append("\n\nYou have access to the following functions:\n")
                for tool in body["tools"]:
                    function = tool["function"]
                    out.append(f"\nfunctions.{function['name']}:\n{html.escape(json.dumps(function['parameters']))}\n")
            out.append("<|im_end|>\n")
        elif role == "user":
            out.append(f"{content}<|im_end|>\n")
        elif role == "assistant":
            if content:
                out.append(f"{content}<|im_end|>\n")
            for call in message.get("tool_calls") or []:
                out.append(f"functions.{call['function']['name']}:\n{html.escape(call['function']['arguments'])}")
            if message.get("tool_calls"):
                out.append("<|im_end|>\n")
        # role == "tool": nothing but the header, as in the real template
    out.append("<|im_start|>assistant\n")
    return "".join(out)


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class LlamaShapedServer(ScriptedServer):
    """The fake server; ``prompts`` holds every rendered prompt, ``bodies`` every request."""

    def __init__(self, policy: Callable[[str, dict[str, Any]], tuple], runaway_s: float = 30.0) -> None:
        super().__init__()
        self.policy = policy
        self.runaway_s = runaway_s
        self.prompts: list[str] = []
        self.base_url = f"{self.url}/v1"
        self.routes["GET /v1/models"] = [{"object": "list", "data": [{"id": "smollm", "object": "model"}]}]
        self.routes["POST /v1/chat/completions"] = [self._complete]

    def _complete(self, body: dict[str, Any]) -> Any:
        prompt = render(body)
        self.prompts.append(prompt)
        tools_on = body.get("tool_choice") not in (None, "none") and bool(body.get("tools"))
        action = self.policy(prompt, body)
        if action[0] == "call" and not tools_on:  # the model never saw the tools
            action = ("say", "I will do that now.")
        max_tokens = body.get("max_tokens")
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish = "stop"
        if action[0] == "runaway":
            if not max_tokens:
                time.sleep(self.runaway_s)
                max_tokens = 7818
            message["content"] = html.escape("I'm thinking " * max_tokens)[: 4 * max_tokens]
            finish = "length"
            completion_tokens = max_tokens
        elif action[0] == "call":
            _, name, arguments = action
            message["tool_calls"] = [{"id": f"call_{len(self.prompts)}", "type": "function",
                                      "function": {"name": name, "arguments": arguments}}]
            finish, completion_tokens = "tool_calls", _tokens(arguments)
        else:
            message["content"] = html.escape(action[1])
            completion_tokens = _tokens(action[1])
        prompt_tokens = _tokens(prompt)
        return {
            "id": "chatcmpl-x", "object": "chat.completion", "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }
