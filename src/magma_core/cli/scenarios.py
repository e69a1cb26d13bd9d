"""``magma scenarios list|show|test-requests``: what the installed scenario providers offer."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.table import Table

from magma_core.cli import CliError
from magma_core.scenarios import ScenarioError, get_scenario, list_scenarios, provider_problems


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("scenarios", help="list installed scenarios and their presets")
    actions = parser.add_subparsers(dest="scenarios_command", metavar="ACTION", required=True)
    actions.add_parser("list", help="one line per installed scenario").set_defaults(func=_list)
    show = actions.add_parser("show", help="presets, definitions, skills and envs of a scenario")
    show.add_argument("id", help="scenario id, e.g. cube")
    show.set_defaults(func=_show)
    from magma_core.cli import request_chains  # stdlib + rich only: listing stays light

    request_chains.register(actions)


def _list(args: argparse.Namespace) -> int:
    try:
        manifests = list_scenarios()
    except ScenarioError as exc:
        raise CliError(str(exc)) from None
    table = Table("scenario", "presets", "environments", title="Installed scenarios")
    for m in manifests:
        table.add_row(m.id, ", ".join(sorted(m.presets)), ", ".join(sorted(m.environments)))
    Console().print(table)
    for line in provider_problems():  # the others still list
        print(f"magma: warning: {line}", file=sys.stderr)
    return 0


def _show(args: argparse.Namespace) -> int:
    try:
        m = get_scenario(args.id)
    except ScenarioError as exc:
        raise CliError(str(exc)) from None
    console = Console()
    console.print(f"[bold]{m.id}[/bold]")
    for kind in ("presets", "definitions", "skills", "suites", "environments"):
        mapping = getattr(m, kind)
        console.print(f"{kind}:" + ("" if mapping else " none"))
        for name, target in sorted(mapping.items()):
            shown = name if kind in ("environments", "suites") else f"{m.id}.{name}"  # suites: bench compile NAME
            console.print(f"  {shown}  ->  {target}")
    return 0
