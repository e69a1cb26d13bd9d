"""``magma gen --skills``: the generation's engine runs with the scenario's skills, as
``magma run --skills`` does; the names are part of what a resumed generation must keep."""

from __future__ import annotations

import pytest

from magma_core.gen import GenSpec
from magma_core.gen.assembly import prepare_generation
from magma_core.scenarios import ScenarioError, load_skills


def test_prepare_generation_loads_the_named_skills() -> None:
    parts = prepare_generation("sorting.SortAll", "trace", skills=("all",))
    assert parts.skills == load_skills("sorting.SortAll", ["all"])
    assert prepare_generation("sorting.SortAll", "trace").skills is None
    with pytest.raises(ScenarioError, match="has no skill 'nope'"):
        prepare_generation("sorting.SortAll", "trace", skills=("nope",))


def test_the_skills_are_part_of_the_generation_shape() -> None:
    spec = GenSpec(target="sorting.SortAll", skills=("sort_all",))
    assert spec.shape()["skills"] == ["sort_all"] and spec.run_spec().skills == ("sort_all",)
    assert "skills" not in GenSpec(target="sorting.SortAll").shape()


def test_the_gen_command_takes_skills(capsys) -> None:
    from magma_core.cli import build_parser
    from magma_core.cli.gen import spec_from_args

    args = build_parser().parse_args(["gen", "sorting.SortAll", "--skills", "all"])
    assert spec_from_args(args).skills == ("all",)
