"""Parsing of ``magma test-tools`` commands with ``ast``: data only, nothing is evaluated.

Accepted forms: ``tool(k=v, ...)``, ``robot.tool(k=v, ...)`` (robot names may hold ``-``, as
ManiSkill's ``panda-1``), ``say("text")``, and the words
``reset``, ``stage``, ``help``, ``exit``. Argument values must be literals (numbers, strings,
booleans, None, lists/tuples/dicts of literals).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

WORDS = ("reset", "stage", "help", "exit", "quit")
MAX_LINE = 10_000
_ROBOT_PREFIX = re.compile(r"^([A-Za-z_][\w-]*-[\w-]*)\.(?=[A-Za-z_]\w*\s*\()")


class ReplSyntaxError(ValueError):
    """The line is not a command the tester accepts (the message says why)."""


@dataclass(frozen=True)
class ReplCommand:
    """One parsed line: a word, a tool call, or ``say``."""

    kind: str  # "word" | "call" | "say"
    name: str = ""
    robot: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    text: str = ""


def parse_command(line: str) -> ReplCommand:
    """Parse one REPL line, or raise ``ReplSyntaxError`` with a one-line reason."""
    line = line.strip()
    if not line:
        raise ReplSyntaxError("empty command")
    if len(line) > MAX_LINE:
        raise ReplSyntaxError(f"command longer than {MAX_LINE} characters")
    if line.lower() in WORDS:
        word = line.lower()
        return ReplCommand("word", name="exit" if word == "quit" else word)
    prefixed = _ROBOT_PREFIX.match(line)  # a robot name that is not a Python name
    if prefixed:
        line = line[prefixed.end():]
    try:
        tree = ast.parse(line, mode="eval")
    except SyntaxError as exc:
        raise ReplSyntaxError(f"not a command: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise ReplSyntaxError("not a command: too deeply nested") from None
    call = tree.body
    if not isinstance(call, ast.Call):
        raise ReplSyntaxError("expected tool(k=v, ...), robot.tool(k=v, ...) or say(\"...\")")
    robot, name = _callee(call.func)
    if prefixed:
        if robot is not None:
            raise ReplSyntaxError("call a tool by name: tool(...) or robot.tool(...)")
        robot = prefixed.group(1)
    if name == "say" and robot is None:
        return _say(call)
    if call.args:
        raise ReplSyntaxError("use keyword arguments only: tool(name=value)")
    arguments: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise ReplSyntaxError("**kwargs is not accepted")
        arguments[kw.arg] = _literal(kw.value, kw.arg)
    return ReplCommand("call", name=name, robot=robot, arguments=arguments)


def _callee(func: ast.expr) -> tuple[str | None, str]:
    if isinstance(func, ast.Name):
        return None, func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id, func.attr
    raise ReplSyntaxError("call a tool by name: tool(...) or robot.tool(...)")


def _say(call: ast.Call) -> ReplCommand:
    if call.keywords or len(call.args) != 1:
        raise ReplSyntaxError('say takes one string: say("...")')
    text = _literal(call.args[0], "say")
    if not isinstance(text, str):
        raise ReplSyntaxError('say takes one string: say("...")')
    return ReplCommand("say", name="say", text=text)


def _literal(node: ast.expr, where: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ReplSyntaxError(f"value of {where!r} must be a literal (number, string, list...)") from None
