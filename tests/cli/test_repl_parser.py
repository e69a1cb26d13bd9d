"""The test-tools REPL parses commands as data and refuses anything else."""

import re

import pytest

from magma_core.cli.repl_parser import ReplCommand, ReplSyntaxError, parse_command


def test_accepted_forms():
    assert parse_command("pick(object='cube')") == ReplCommand("call", "pick", None, {"object": "cube"})
    assert parse_command(' panda.place(area="zone_a", height=0.1) ') == ReplCommand(
        "call", "place", "panda", {"area": "zone_a", "height": 0.1}
    )
    assert parse_command("detect_objects()") == ReplCommand("call", "detect_objects")
    assert parse_command("switch(on=True, ids=[1, 2])").arguments == {"on": True, "ids": [1, 2]}
    assert parse_command('say("done")') == ReplCommand("say", "say", text="done")
    assert parse_command("RESET").name == "reset"
    assert parse_command("quit").name == "exit"


@pytest.mark.parametrize(
    "line, reason",
    [
        ("__import__('os').system('touch /tmp/pwned')", "tool(...) or robot.tool"),
        ("pick(object=__import__('os'))", "literal"),
        ("pick(object=open('/etc/passwd').read())", "literal"),
        ("os.path.join(a='x')", "tool(...) or robot.tool"),
        ("pick('cube')", "keyword arguments only"),
        ("pick(**{'object': 'cube'})", "**kwargs"),
        ("pick(object='cube", "not a command"),
        ("x = 1", "not a command"),
        ("pick.__class__", "expected tool"),
        ("(lambda: 1)()", "tool(...) or robot.tool"),
        ("say(1)", "one string"),
        ("", "empty"),
    ],
)
def test_hostile_input_is_refused(line, reason):
    with pytest.raises(ReplSyntaxError, match=re.escape(reason)):
        parse_command(line)


def test_robot_names_with_dashes():
    assert parse_command("panda-1.pick(object='red_cube')") == ReplCommand(
        "call", "pick", "panda-1", {"object": "red_cube"}
    )
    for line in ("panda-1.pick.__class__()", "panda-1.x", "panda-1.a.pick()"):
        with pytest.raises(ReplSyntaxError):
            parse_command(line)


@pytest.mark.parametrize("line", ["(" * 4000 + ")" * 4000, "pick(x=" + "[" * 3000 + "]" * 3000 + ")"])
def test_deeply_nested_input_is_refused(line):
    with pytest.raises(ReplSyntaxError, match="not a command|literal"):
        parse_command(line)
