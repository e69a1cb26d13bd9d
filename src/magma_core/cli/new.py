"""``magma new scenario NAME``: write a working scenario package to start from."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("new", help="write a new scenario package to start from")
    kinds = parser.add_subparsers(dest="new_command", metavar="KIND", required=True,
                                  parser_class=type(parser))
    scenario = kinds.add_parser(
        "scenario", help="a package with a world, tools, a stage, a preset with its "
        "reference trace, a definition and a test; every id derived from NAME")
    scenario.add_argument("name", help="the scenario id, e.g. my_lab (lowercase, digits, _)")
    scenario.add_argument("--dir", type=Path, default=None,
                          help="the folder to write (default: ./NAME)")
    scenario.set_defaults(func=new_scenario)


def new_scenario(args: argparse.Namespace) -> int:
    from magma_core.cli.scaffold import Names, write_scenario_package

    names = Names.of(args.name)
    folder = args.dir or Path(args.name)
    files = write_scenario_package(args.name, folder)
    print(f"wrote the {names.scenario} scenario package in {folder} ({len(files)} files)")
    sibling = Path(sys.executable).with_name("magma")  # this environment's own command
    magma = str(sibling) if sibling.exists() else "magma"
    print("next, in the environment that has MAGMA (each line works as it is):")
    print(f"  {sys.executable} -m pip install -e {folder}")
    print(f"  {magma} run {names.scenario}.Deliver --agent trace")
    print(f"  {sys.executable} {folder / 'tests' / f'test_{names.scenario}.py'}")
    print(f"  {magma} bench compile {names.scenario} --out suites/{names.scenario}")
    print(f"  {magma} bench run suites/{names.scenario} --agent trace --name trace")
    print(f"(the test runs without pytest; {folder / 'README.md'} lists the rest)")
    return 0
