"""Constructor arguments on the command line (``--NAME VALUE``): the predecessor's auto_cast,
checked against the constructor, on run, gen, bench compile, test-tools and test-requests."""

from __future__ import annotations

import pytest

from magma_core.cli.ctor_args import auto_cast, parse_ctor_args
from magma_core.scenarios.construct import check_arguments, construct
from magma_core.user_error import UserError


@pytest.mark.parametrize("text, value", [
    ("true", True), ("False", False), ("3", 3), ("-2", -2), ("0.25", 0.25), ("1e-3", 0.001),
    ("zone_a", "zone_a"), ("a,b", ["a", "b"]), ("1,2.5,true,x", [1, 2.5, True, "x"]),
    ("nan", "nan"), ("", ""),
])
def test_auto_cast(text, value) -> None:
    assert auto_cast(text) == value and type(auto_cast(text)) is type(value)


def test_parse_ctor_args_reads_both_forms_and_refuses_the_rest() -> None:
    assert parse_ctor_args(["--num-cubes", "3", "--zones=a,b", "--offset", "-0.5"]) == {
        "num_cubes": 3, "zones": ["a", "b"], "offset": -0.5}
    for bad, words in ((["--x"], "needs a value"), (["stray"], "unexpected argument"),
                       (["--x", "1", "--x", "2"], "given twice"), (["--a.b", "1"], "not a constructor")):
        with pytest.raises(UserError, match=words):
            parse_ctor_args(bad)


class Preset:
    def __init__(self, difficulty: int = 1, scale: float = 1.0, zones: list[str] | None = None,
                 strict: bool = False, *, label: str = "x") -> None:
        self.args = (difficulty, scale, zones, strict, label)


def test_construct_checks_names_and_types() -> None:
    built = construct(Preset, {"difficulty": 2, "scale": 3, "zones": ["a"], "label": "y"}, "s.Preset")
    assert built.args == (2, 3.0, ["a"], False, "y") and isinstance(built.args[1], float)
    with pytest.raises(UserError) as caught:
        check_arguments(Preset, {"difficulty": 2, "difficuty": 3}, "s.Preset")
    assert str(caught.value) == ("s.Preset takes no constructor argument 'difficuty' (accepted: "
                                 "--difficulty, --scale, --zones, --strict, --label)")
    for name, value, expected in (("difficulty", "hard", "int"), ("strict", 1, "bool"),
                                  ("zones", ["a", 2], "list[str] | None")):
        with pytest.raises(UserError, match=f"'{name}' expects {expected}"):
            check_arguments(Preset, {name: value}, "s.Preset")


def test_a_definition_keeping_the_generic_constructor_lists_its_fields() -> None:
    from magma_core.scenarios import load_definition

    definition = construct(load_definition("sorting.LongSorting"), {"max_stages": 6}, "x")
    assert definition.max_stages == 6
    with pytest.raises(UserError, match=r"accepted: .*--max-stages"):
        check_arguments(load_definition("sorting.LongSorting"), {"stages": 6}, "sorting.LongSorting")


@pytest.mark.parametrize("command", [
    ["run", "cube.PickPlace", "--agent", "trace"],
    ["gen", "cube.PickPlace"],
    ["test-tools", "cube.PickPlace"],
    ["scenarios", "test-requests", "sorting.LongSorting"],
    ["bench", "compile", "smoke", "--out", "suite"],
])
def test_every_command_refuses_a_mistyped_constructor_argument_in_one_line(
        workdir, command, capsys, monkeypatch) -> None:
    from magma_core.cli import main

    monkeypatch.chdir(workdir)  # in-process: the same main() the console script runs
    assert main([*command, "--difficuty", "2"]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("magma: error")]
    assert len(lines) == 1 and "no constructor argument 'difficuty'" in lines[0]
    assert "(accepted: " in lines[0]


def test_other_commands_still_refuse_unknown_options(capsys) -> None:
    from magma_core.cli import main

    with pytest.raises(SystemExit) as caught:
        main(["runs", "list", "--bogus", "1"])
    assert caught.value.code == 2
    assert "unrecognized arguments: --bogus 1" in capsys.readouterr().err


def test_test_requests_takes_constructor_arguments_setup_and_a_stage_cap(capsys) -> None:
    from magma_core.cli import main

    assert main(["scenarios", "test-requests", "sorting.LongSorting", "trace", "--count", "2",
                 "--max-stages", "5", "--setup", "ForbidRule", "--name", "Renamed"]) == 0
    out = capsys.readouterr().out
    assert "setup: ForbidRule applied before every chain" in out
    assert "weights: SortCube 3, SortColourFamily 2" in out  # the eligible requests' weights
    assert "(user) " in out and "goals: " in out and "target " in out
    assert "rule: Do not touch" in out  # the setup's rule holds in every chain
    for line in out.splitlines():
        if line.startswith("seed "):
            assert int(line.split(": ")[1].split(" stages")[0]) <= 5
    assert main(["scenarios", "test-requests", "sorting.LongSorting", "mass", "--count", "5",
                 "--name", "Renamed"]) == 0
    assert "Renamed: 5 seeds" in capsys.readouterr().out
    assert main(["scenarios", "test-requests", "sorting.LongSorting", "--setup", "Sort"]) == 2
    assert "matches several of the active requests" in capsys.readouterr().err
