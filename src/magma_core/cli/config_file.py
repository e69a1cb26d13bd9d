"""``--config FILE`` for ``magma run``, ``magma gen`` and ``magma bench run``: one YAML or TOML
file holding what the command's flags hold; flags given on the command line win over it.

The file maps flag names (``max-nodes`` or ``max_nodes``) to values; a section named after the
command (``run:``, ``gen:``, ``bench:``) overrides the top level for that command, so one file
can serve all three: a top-level option that only another of them takes is passed over. A value is what the flag would take: a string, a number, true/false for a
switch (false leaves it off), a list for a flag given several times, a mapping for a JSON flag
(``extra-body``); a list for a model role (``agent``, ``judge``, ``coach``, ``user``) is
that role's backends (:mod:`magma_core.agents.backends`). The file's values become command-line tokens added to the user's, so each
goes through the flag's own checks; a flag given by the user drops the file's value. An
unknown key, a list for a flag that takes one value, or an unreadable file is one line naming
the file. Positional arguments (the target, the suite) stay on the command line.
"""

from __future__ import annotations

import argparse
import json
import tomllib
from collections.abc import Sequence
from pathlib import Path

from magma_core.json_types import JSONDict, JSONValue
from magma_core.user_error import UserError

#: commands that take ``--config`` (argv prefix -> the section name in the file)
COMMANDS = {("run",): "run", ("gen",): "gen", ("bench", "run"): "bench"}
SECTIONS = set(COMMANDS.values())
#: model roles: a list of specs is one role served by several backends (agents.backends)
ROLE_OPTIONS = ("agent", "judge", "coach", "user")


class ConfigFileError(UserError):
    """A config file that cannot be read or names what the command does not take."""


def add_config_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--config FILE`` (read before parsing by :func:`expand_config`)."""
    parser.add_argument("--config", default=None, metavar="FILE",
                        help="a YAML or TOML file of this command's options (flags win over it; a "
                        "run:/gen:/bench: section overrides the top level)")


def read_config(path: Path, section: str) -> tuple[JSONDict, JSONDict]:
    """``(top level, section)`` of ``path``: the shared options (other commands' sections left
    out) and the options of the ``section`` table."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigFileError(f"cannot read config {path}: {exc.strerror or exc}") from None
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # yaml.YAMLError, tomllib.TOMLDecodeError
        kind = "TOML" if path.suffix == ".toml" else "YAML"
        raise ConfigFileError(f"config {path} is not valid {kind}: {' '.join(str(exc).split())[:200]}") from None
    if data is None:
        return {}, {}
    if not isinstance(data, dict):
        raise ConfigFileError(f"config {path} must be a mapping of option names to values")
    table = data.get(section) or {}
    if not isinstance(table, dict):
        raise ConfigFileError(f"config {path}: section {section!r} must be a mapping")
    return {k: v for k, v in data.items() if k not in SECTIONS}, dict(table)


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    out = {}
    for action in parser._actions:  # the parser's own table of options
        for option in action.option_strings:
            if option.startswith("--"):
                out[option[2:]] = action
    return out


def _subparser(parser: argparse.ArgumentParser, words: Sequence[str]) -> argparse.ArgumentParser | None:
    for word in words:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or word not in subs[0].choices:
            return None
        parser = subs[0].choices[word]
    return parser


def _tokens(path: Path, key: str, value: JSONValue, action: argparse.Action) -> list[str]:
    option = action.option_strings[-1] if action.option_strings[-1].startswith("--") else f"--{key}"
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        if not isinstance(value, bool):
            raise ConfigFileError(f"config {path}: {key} is a switch, give true or false")
        return [option] if value else []
    if isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*"):
        items = value if isinstance(value, list) else [value]
        if isinstance(action, argparse._AppendAction):
            return [t for item in items for t in (option, _text(item))]
        return [option, *(_text(item) for item in items)]
    if isinstance(value, list) and action.dest in ROLE_OPTIONS:  # several backends for a role
        return [option, ",".join(_text(item) for item in value)]
    if isinstance(value, list):
        raise ConfigFileError(f"config {path}: {key} takes one value, not a list")
    if action.nargs == "?" and value is True:
        return [option]
    return [option, _text(value)]


def _check(path: str, key: str, values: list[str], action: argparse.Action) -> None:
    """The flag's own type and choices, applied here so a bad value names the file."""
    for text in values:
        try:
            value = action.type(text) if callable(action.type) else text
        except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
            raise ConfigFileError(f"config {path}: {key}: {exc}") from None
        if action.choices is not None and value not in action.choices:
            raise ConfigFileError(f"config {path}: {key}: {text!r} is not one of "
                                  f"{', '.join(map(str, action.choices))}")


def _text(value: JSONValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)


def expand_config(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """``argv`` with the options of its ``--config FILE`` added (see the module); ``argv`` unchanged when the command takes no config or none is given."""
    argv = list(argv)
    found = [(p, s) for p, s in COMMANDS.items() if tuple(argv[:len(p)]) == p]
    if not found:
        return argv
    prefix, section = found[0]
    rest = argv[len(prefix):]
    path = None
    for i, word in enumerate(rest):
        if word == "--config" and i + 1 < len(rest):
            path = rest[i + 1]
        elif word.startswith("--config="):
            path = word.split("=", 1)[1]
    if path is None:
        return argv
    command = _subparser(parser, prefix)
    if command is None:
        return argv
    options = _options(command)
    given = {w[2:].split("=", 1)[0] for w in rest if w.startswith("--")}
    given_dests = {options[g].dest for g in given if g in options}
    shared, own = read_config(Path(path), section)
    others = {name for p in COMMANDS if p != prefix for name in _options(_subparser(parser, p) or command)}
    tokens: list[str] = []
    for key, value in {**shared, **own}.items():
        name = str(key).replace("_", "-")
        action = options.get(name)
        if action is None and key not in own and name in others:
            continue  # a shared option another command takes
        if action is None or name in ("config", "help"):
            accepted = ", ".join(sorted(n for n in options if n not in ("config", "help")))
            raise ConfigFileError(f"config {path}: magma {' '.join(prefix)} has no option {key!r} "
                                  f"(it takes {accepted})")
        if action.dest in given_dests or value is None:
            continue  # the command line wins
        words = _tokens(Path(path), str(key), value, action)
        _check(path, str(key), [w for w in words if w not in action.option_strings], action)
        tokens.extend(words)
    return [*prefix, *rest, *tokens]  # after: a list flag of the file cannot swallow a positional
