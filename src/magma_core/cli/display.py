"""Terminal output of runs: live lines for the episodes in flight, the result table after."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markup import escape
from rich.measure import Measurement
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from magma_core.cli.out_folder import default_out

if TYPE_CHECKING:  # named for the annotations only
    from magma_core.store.run_store import EpisodeSummary

STATUS_STYLE = {"success": "green", "error": "bold red", "running": "cyan"}


class EpisodeProgress:
    """A rich progress display: one overall bar and one live line per episode in flight.

    A finished episode's live line is removed and one line about it is printed above the live
    area, so the live area stays as tall as the number of slots, however many episodes run.
    """

    def __init__(self, console: Console, total: int,
                 traceback_command: Callable[[int], str] | None = None) -> None:
        self.traceback_command = traceback_command
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.overall = self.progress.add_task("episodes", total=total)
        self.lines: dict[int, TaskID] = {}

    def __enter__(self) -> EpisodeProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def notice(self, line: str) -> None:
        """Print one line about the agent (a failed attempt, a retry, a warning) above the
        live area, as it happens."""
        self.progress.console.print(f"[yellow]agent:[/yellow] {escape(line)}", highlight=False)

    def on_event(self, event: str, episode: object, payload: object) -> None:
        if event == "notice":  # from a worker process: the payload is the line
            self.notice(str(payload))
        elif event == "start":
            view = payload
            self.lines[episode.episode] = self.progress.add_task(
                _line(episode.episode, episode.slot, view.stage_index, view.num_stages, "running", 0),
                total=view.num_stages,
            )
        elif event == "step":
            task_id = self.lines.get(episode.episode)
            if task_id is None:
                return
            outcome = payload
            view = outcome.next_view
            done = view.stage_index if not view.episode_over else view.num_stages
            self.progress.update(
                task_id,
                description=_line(
                    episode.episode, episode.slot, view.stage_index, view.num_stages,
                    outcome.status, episode.decisions,
                ),
                completed=min(done, view.num_stages),
            )
        elif event == "end":
            task_id = self.lines.pop(episode.episode, None)
            if task_id is not None:
                self.progress.remove_task(task_id)
            self.progress.console.print(
                finished_line(payload, self.traceback_command), highlight=False
            )
            self.progress.advance(self.overall)


def finished_line(summary: EpisodeSummary, traceback_command: Callable[[int], str] | None = None) -> str:
    """The line printed above the live area when an episode ends (rich markup). An episode
    that did not succeed gets its one-line reason; an ``error`` episode also the command
    that prints its traceback (``traceback_command(episode)``)."""
    line = (
        f"episode {summary.episode:>3} [{_style(summary.status)}] "
        f"{summary.stages_passed}/{summary.stages_total} stages, "
        f"{summary.tool_calls} tool calls, {summary.decisions} decisions, {summary.wall_s:.1f}s"
    )
    why = why_line(summary, traceback_command)
    return f"{line}\n      {why}" if why else line


def one_line(text: str, limit: int = 240) -> str:
    """``text``'s first line, cut to ``limit`` characters, safe to print (rich markup escaped)."""
    from magma_core.text_safety import safe_text

    first = safe_text(str(text or "")).strip().splitlines()
    line = first[0] if first else ""
    return escape(line if len(line) <= limit else line[: limit - 1] + "…")


def why_line(summary: EpisodeSummary, traceback_command: Callable[[int], str] | None = None) -> str:
    """``why: REASON`` for an episode that did not succeed ("" for a success), with
    ``(traceback: COMMAND)`` for an ``error`` episode (rich markup)."""
    if summary.status == "success":
        return ""
    reason = one_line(getattr(summary, "reason", ""), limit=400) or "no reason recorded"
    line = f"why: {reason}"
    if summary.status == "error" and traceback_command is not None:
        line += f"  [dim](traceback: {escape(traceback_command(summary.episode))})[/dim]"
    return line


def failure_lines(summaries: Sequence[EpisodeSummary],
                  traceback_command: Callable[[int], str] | None = None,
                  limit: int = 10) -> list[str]:
    """One line per episode that did not succeed, ``episode K [status] why: …`` (rich markup),
    printed under the result table; after ``limit`` of them, one line counting the rest."""
    failed = [s for s in summaries if s.status != "success"]
    lines = [f"episode {s.episode:>3} [{_style(s.status)}] {why_line(s, traceback_command)}"
             for s in failed[:limit]]
    if len(failed) > limit:
        lines.append(f"... and {len(failed) - limit} more episode(s) that did not succeed "
                     "(magma runs show NAME --episode K --traceback)")
    return lines


def _line(episode: int, slot: int, stage: int, stages: int, status: str, decisions: int) -> str:
    return (
        f"episode {episode:>3} (slot {slot}) stage {min(stage + 1, stages)}/{stages} "
        f"[{_style(status)}] {decisions} decisions"
    )


def _style(status: str) -> str:
    style = STATUS_STYLE.get(status, "yellow")
    return f"[{style}]{escape(status)}[/{style}]"


#: Result table headers: in full where the terminal is wide enough, else short ones with a
#: legend under the table (both say the same thing, in the same order).
HEADERS = ("episode", "seed", "status", "stages", "optimal", "accept.", "exceeded", "calls",
           "decisions", "tokens", "agent wait s", "wall s")
SHORT_HEADERS = ("ep", "seed", "status", "stages", "opt", "acc", "exc", "calls", "dec",
                 "tokens", "wait s", "wall s")
SHORT_LEGEND = (
    "opt/acc/exc: stages OPTIMAL/ACCEPTABLE/EXCEEDED, calls: tool calls, "
    "dec: decisions, wait s: time waiting for the agent"
)


class ResultsTable:
    """The result table of a run, one row per episode. It renders with full headers when they
    fit the width it is given and with short headers and a legend otherwise; the status
    column is never wrapped nor cut."""

    def __init__(self, name: str, summaries: Sequence[EpisodeSummary]) -> None:
        self.name = name
        self.rows = [
            (
                str(s.episode), str(s.seed), s.status, f"{s.stages_passed}/{s.stages_total}",
                str(s.optimal), str(s.acceptable), str(s.exceeded), str(s.tool_calls),
                str(s.decisions), str(s.total_tokens), f"{s.agent_latency_s:.2f}",
                f"{s.wall_s:.2f}",
            )
            for s in summaries
        ]

    def table(self, short: bool) -> Table:
        """The table with short headers and a legend (``short``) or with full headers."""
        table = Table(
            title=f"run {self.name}",
            caption=SHORT_LEGEND if short else None,
            box=box.SIMPLE_HEAD,
            show_edge=False,
            pad_edge=False,
            padding=(0, 0) if short else (0, 1),
            collapse_padding=True,
        )
        status_width = max([len("status"), *(len(row[2]) for row in self.rows)])
        for header in SHORT_HEADERS if short else HEADERS:
            if header == "status":
                table.add_column(header, no_wrap=True, min_width=status_width)
            else:
                table.add_column(header, justify="right")
        for row in self.rows:
            table.add_row(*row[:2], _style(row[2]), *row[3:])
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        full = self.table(short=False)
        natural = Measurement.get(console, options.update_width(1_000_000), full).maximum
        fits = natural <= options.max_width
        yield full if fits else self.table(short=True)


def results_table(name: str, summaries: Sequence[EpisodeSummary]) -> ResultsTable:
    """The result table (a rich renderable) of ``summaries``."""
    return ResultsTable(name, summaries)


def totals_line(summaries: Sequence[EpisodeSummary], *, elapsed_s: float | None = None) -> str:
    """One line of totals. The episode times are summed (slots run episodes side by side, so
    the sum exceeds the run's duration); ``elapsed_s``, when given, is the run's own time."""
    n = len(summaries)
    success = sum(1 for s in summaries if s.status == "success")
    stages = sum(s.stages_passed for s in summaries), sum(s.stages_total for s in summaries)
    elapsed = "" if elapsed_s is None else f", {elapsed_s:.1f}s elapsed"
    return (
        f"total: {success}/{n} episodes succeeded, {stages[0]}/{stages[1]} stages passed, "
        f"OPTIMAL {sum(s.optimal for s in summaries)}, ACCEPTABLE "
        f"{sum(s.acceptable for s in summaries)}, EXCEEDED {sum(s.exceeded for s in summaries)}, "
        f"{sum(s.tool_calls for s in summaries)} tool calls, "
        f"{sum(s.total_tokens for s in summaries)} tokens, "
        f"{sum(s.wall_s for s in summaries):.1f}s episode time (summed){elapsed}"
    )


def wrap_clauses(line: str, width: int, indent: str = "  ") -> str:
    """``line`` broken after ", " so that no line is wider than ``width`` (a clause longer
    than that stands alone); lines after the first are indented."""
    clauses = line.split(", ")
    lines = [clauses[0]]
    for clause in clauses[1:]:
        if len(lines[-1]) + 2 + len(clause) <= width:
            lines[-1] += f", {clause}"
        else:
            lines[-1] += ","
            lines.append(f"{indent}{clause}")
    return "\n".join(lines)


def traceback_command(name: str, out: Path) -> Callable[[int], str]:
    """``episode -> the command that prints that episode's reason and traceback``."""
    where = "" if Path(out) == default_out() else f" --out {shlex.quote(str(out))}"
    return lambda episode: (f"magma runs show {shlex.quote(name)} --episode {episode} "
                            f"--traceback{where}")


def make_console() -> Console:
    """A console; when output is not a terminal (CI, pipes) it is 120 columns wide."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=120)
    return console
