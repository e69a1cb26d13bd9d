"""Terminal output of runs, with stand-in events and summaries (no simulator): the live area
keeps only episodes in flight, the result table stays legible when narrow, the totals say
what their times are."""

from __future__ import annotations

import io
from types import SimpleNamespace as NS

import pytest
from rich.console import Console

from magma_core.cli.display import (
    HEADERS,
    SHORT_HEADERS,
    EpisodeProgress,
    results_table,
    totals_line,
    wrap_clauses,
)

STATUSES = ("success", "failed", "exceeded", "error", "no_action", "decision_cap",
            "judge_unavailable", "running")


def summary(episode: int, status: str = "success", **fields) -> NS:
    values = dict(episode=episode, seed=1000 + episode, status=status, stages_total=12,
                  stages_passed=10, optimal=8, acceptable=1, exceeded=1, tool_calls=123,
                  decisions=45, wall_s=1234.5, total_tokens=1234567, agent_latency_s=123.45)
    values.update(fields)
    return NS(**values)


def view(stage: int, stages: int = 2, over: bool = False) -> NS:
    return NS(stage_index=stage, num_stages=stages, episode_over=over)


def console(width: int = 100) -> Console:
    return Console(file=io.StringIO(), width=width, record=True)


# -- live progress ----------------------------------------------------------------------------
def test_the_live_area_holds_only_episodes_in_flight():
    out = console()
    slots, total = 4, 240
    with EpisodeProgress(out, total) as progress:
        running: dict[int, NS] = {}
        for k in range(total):
            if len(running) == slots:  # the oldest ends, its slot takes the next episode
                first = min(running)
                progress.on_event("end", running.pop(first), summary(first, wall_s=0.7))
            episode = NS(episode=k, slot=k % slots, decisions=0)
            running[k] = episode
            progress.on_event("start", episode, view(0))
            episode.decisions = 1
            progress.on_event("step", episode, NS(status="running", next_view=view(1)))
            assert len(progress.progress.tasks) <= 1 + slots  # the overall bar + active slots
        for k in sorted(running):
            progress.on_event("end", running.pop(k), summary(k, wall_s=0.7))
        assert [t.description for t in progress.progress.tasks] == ["episodes"]
        assert progress.progress.tasks[0].completed == total
    text = out.export_text()
    for k in (0, 1, 137, 239):  # one line per finished episode, printed above the live area
        assert f"episode {k:>3} [success] 10/12 stages, 123 tool calls, 45 decisions, 0.7s" in text
    assert text.count(" decisions, 0.7s") == total
    assert "240/240" in text


def test_live_line_follows_the_episode():
    with EpisodeProgress(console(), 1) as progress:
        episode = NS(episode=7, slot=2, decisions=0)
        progress.on_event("start", episode, view(0, 3))
        episode.decisions = 3
        progress.on_event("step", episode, NS(status="running", next_view=view(1, 3)))
        task = progress.progress.tasks[-1]
        assert "episode   7 (slot 2) stage 2/3" in task.description
        assert "3 decisions" in task.description and task.completed == 1


def test_events_of_unknown_episodes_are_harmless():
    out = console()
    with EpisodeProgress(out, 1) as progress:
        stranger = NS(episode=3, slot=0, decisions=1)
        progress.on_event("step", stranger, NS(status="running", next_view=view(1)))
        progress.on_event("end", stranger, summary(3, status="error"))
        assert progress.progress.tasks[0].completed == 1
    assert "episode   3 [error] 10/12 stages" in out.export_text()


# -- result table ---------------------------------------------------------------------------
@pytest.mark.parametrize("width, headers", [(80, SHORT_HEADERS), (120, HEADERS)])
def test_results_table_is_legible(width, headers):
    out = console(width)
    summaries = [summary(k, status) for k, status in enumerate(STATUSES)]
    out.print(results_table("r", summaries))
    text = out.export_text()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    lines = text.splitlines()
    header_line = next(line for line in lines if line.split()[:1] == [headers[0]])
    for header in headers:
        assert header in header_line
    for status in STATUSES:
        assert any(line.split()[2:3] == [status] for line in lines), status
    for value in ("10/12", "1234567", "123.45", "1234.50", "1007"):
        assert value in text
    if headers is SHORT_HEADERS:  # short headers come with their legend
        assert "OPTIMAL/ACCEPTABLE/EXCEEDED" in text and "waiting for the agent" in text
    else:
        assert "agent wait s" in header_line and "agent s " not in text


def test_results_table_without_episodes():
    out = console(80)
    out.print(results_table("empty", []))
    assert "run empty" in out.export_text()


# -- totals -----------------------------------------------------------------------------------
def test_totals_line_labels_summed_and_elapsed_time():
    summaries = [summary(k, wall_s=1.1, status="success" if k else "failed") for k in range(240)]
    line = totals_line(summaries)  # the positional call still works
    assert line.startswith("total: 239/240 episodes succeeded, 2400/2880 stages passed")
    assert line.endswith("264.0s episode time (summed)")
    assert "elapsed" not in line
    line = totals_line(summaries, elapsed_s=74.04)
    assert line.endswith("264.0s episode time (summed), 74.0s elapsed")
    with pytest.raises(TypeError):
        totals_line(summaries, 74.0)  # elapsed_s is keyword-only


def test_totals_wrap_between_clauses_never_inside_one():
    line = totals_line([summary(k) for k in range(3)], elapsed_s=12.3)
    out = console(width=80)
    out.print(wrap_clauses(line, out.width), highlight=False)
    lines = out.export_text().rstrip("\n").splitlines()
    assert len(lines) > 1 and all(len(text) <= 80 for text in lines)
    assert all(text.endswith(",") for text in lines[:-1])
    assert " ".join(text.strip() for text in lines) == line


def test_agent_notices_show_above_the_live_area():
    out = console()
    with EpisodeProgress(out, 2) as progress:
        progress.on_event("start", NS(episode=0, slot=0, decisions=0), view(0))
        progress.notice("model call attempt 1/3 failed after 120.0 s (timeout); retrying in 0.5 s")
        progress.on_event("notice", None, "warning: the server may ignore tools")
    text = out.export_text()
    assert "agent: model call attempt 1/3 failed after 120.0 s" in text
    assert "agent: warning: the server may ignore tools" in text


# -- why an episode did not succeed -----------------------------------------------------------
def test_an_error_episode_shows_its_reason_and_the_traceback_command():
    from magma_core.cli.display import failure_lines, finished_line, traceback_command

    command = traceback_command("my run", "elsewhere")
    failed = summary(3, "error", reason="KeyError while applying the state updates of press: "
                     "'env state has no path'\nsecond line [red]not markup[/red]")
    out = console(300)
    out.print(finished_line(failed, command), highlight=False)
    text = out.export_text()
    assert "why: KeyError while applying the state updates of press" in text
    assert "second line" not in text  # one line
    assert "magma runs show 'my run' --episode 3 --traceback --out elsewhere" in text
    capped = summary(4, "decision_cap", reason="reached the cap of 60 decisions")
    lines = failure_lines([summary(0), failed, capped], command)
    assert len(lines) == 2 and "reached the cap of 60 decisions" in lines[1]
    assert "traceback" not in lines[1]  # only error episodes have one
    assert finished_line(summary(0), command).count("\n") == 0  # a success: no why line
    many = failure_lines([summary(k, "failed", reason="x") for k in range(15)], command, limit=10)
    assert len(many) == 11 and "5 more" in many[-1]


def test_the_traceback_command_omits_the_default_folder(monkeypatch):
    from magma_core.cli.display import traceback_command

    monkeypatch.delenv("MAGMA_OUT", raising=False)
    assert traceback_command("r", "runs")(0) == "magma runs show r --episode 0 --traceback"
    monkeypatch.setenv("MAGMA_OUT", "/tmp/store")
    assert traceback_command("r", "/tmp/store")(1) == "magma runs show r --episode 1 --traceback"
    assert traceback_command("r", "runs")(1).endswith("--out runs")
