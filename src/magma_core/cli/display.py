"""Terminal output of runs: live per-episode lines while running, the result table after."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

STATUS_STYLE = {"success": "green", "error": "bold red", "running": "cyan"}


class EpisodeProgress:
    """A rich progress display: one overall bar and one live line per episode in flight."""

    def __init__(self, console: Console, total: int) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.overall = self.progress.add_task("episodes", total=total)
        self.lines: dict[int, Any] = {}

    def __enter__(self) -> EpisodeProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def on_event(self, event: str, episode: Any, payload: Any) -> None:
        if event == "start":
            view = payload
            self.lines[episode.episode] = self.progress.add_task(
                _line(episode.episode, episode.slot, view.stage_index, view.num_stages, "running", 0),
                total=view.num_stages,
            )
        elif event == "step":
            outcome = payload
            view = outcome.next_view
            done = view.stage_index if not view.episode_over else view.num_stages
            self.progress.update(
                self.lines[episode.episode],
                description=_line(
                    episode.episode, episode.slot, view.stage_index, view.num_stages,
                    outcome.status, episode.decisions,
                ),
                completed=min(done, view.num_stages),
            )
        elif event == "end":
            summary = payload
            task_id = self.lines.pop(episode.episode)
            self.progress.update(
                task_id,
                description=f"episode {summary.episode:>3} [{_style(summary.status)}] "
                f"{summary.stages_passed}/{summary.stages_total} stages, "
                f"{summary.tool_calls} tool calls, {summary.wall_s:.1f}s",
                completed=summary.stages_passed,
            )
            self.progress.advance(self.overall)


def _line(episode: int, slot: int, stage: int, stages: int, status: str, decisions: int) -> str:
    return (
        f"episode {episode:>3} (slot {slot}) stage {min(stage + 1, stages)}/{stages} "
        f"[{_style(status)}] {decisions} decisions"
    )


def _style(status: str) -> str:
    style = STATUS_STYLE.get(status, "yellow")
    return f"[{style}]{status}[/{style}]"


def results_table(name: str, summaries: Sequence[Any]) -> Table:
    table = Table(title=f"run {name}")
    for column in ("episode", "seed", "status", "stages passed", "OPTIMAL", "ACCEPTABLE",
                   "EXCEEDED", "tool calls", "decisions", "tokens", "agent s", "wall s"):
        table.add_column(column, justify="right" if column not in ("status",) else "left")
    for s in summaries:
        table.add_row(
            str(s.episode), str(s.seed), _style(s.status), f"{s.stages_passed}/{s.stages_total}",
            str(s.optimal), str(s.acceptable), str(s.exceeded), str(s.tool_calls),
            str(s.decisions), str(s.total_tokens), f"{s.agent_latency_s:.2f}", f"{s.wall_s:.2f}",
        )
    return table


def totals_line(summaries: Sequence[Any]) -> str:
    n = len(summaries)
    success = sum(1 for s in summaries if s.status == "success")
    stages = sum(s.stages_passed for s in summaries), sum(s.stages_total for s in summaries)
    return (
        f"total: {success}/{n} episodes succeeded, {stages[0]}/{stages[1]} stages passed, "
        f"OPTIMAL {sum(s.optimal for s in summaries)}, ACCEPTABLE "
        f"{sum(s.acceptable for s in summaries)}, EXCEEDED {sum(s.exceeded for s in summaries)}, "
        f"{sum(s.tool_calls for s in summaries)} tool calls, "
        f"{sum(s.total_tokens for s in summaries)} tokens, "
        f"{sum(s.wall_s for s in summaries):.1f}s"
    )


def make_console() -> Console:
    """A console; when output is not a terminal (CI, pipes) it is 120 columns wide."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=120)
    return console
