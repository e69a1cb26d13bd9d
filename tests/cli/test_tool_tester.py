"""``magma test-tools``: driven through stdin on the real simulator, and the REPL loop on a
stand-in engine (line sources, Ctrl-C, stage descriptions)."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from types import SimpleNamespace as NS

import pytest

from magma_core.cli import tool_tester
from magma_core.cli.tool_tester import PROMPT, Repl

from .conftest import magma


@pytest.mark.sim
def test_tools_run_through_the_engine_on_every_slot(workdir):
    script = "\n".join([
        'pick(object="cube")',
        'panda.place(area="zone_a")',
        "stage",
        'say("The cube is in zone A.")',
        "exit",
    ])
    proc = magma("test-tools", "cube.PickPlace", "--slots", "2", cwd=workdir, stdin=script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for slot in (0, 1):
        assert f"[slot {slot}] panda.pick: ok: Picked the cube." in out
        assert f"[slot {slot}] panda.place: ok: Placed the cube in zone_a." in out
        assert f"[slot {slot}] stage verification: 0" in out
        assert f"[slot {slot}] stage verification: 1" in out
        assert f"[slot {slot}] finished task: success" in out
        # after a command: the stage (index, kind, goal), not the tool's message again
        assert f"[slot {slot}] still on stage 1/2 (action): On the table: cube in zone_a." in out
        assert (f"[slot {slot}] next stage 2/2 (text-only): "
                "Clearly inform the user that the mission is complete.") in out
    assert "next stage 2/2: (env)" not in out


@pytest.mark.sim
def test_state_updates_and_protection_apply(workdir):
    script = "switch_machine(on=True)\nreset\nexit\n"
    proc = magma("test-tools", "cube.Machine", cwd=workdir, stdin=script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "panda.switch_machine: ok: Machine switched on." in proc.stdout
    assert "stage verification: 1" in proc.stdout  # the goal reads the updated extra state


@pytest.mark.sim
def test_hostile_input_is_refused_and_never_executed(workdir):
    marker = Path(workdir) / "pwned"
    script = "\n".join([
        f"__import__('os').system('touch {marker}')",
        f"pick(object=__import__('os').system('touch {marker}'))",
        "pick.__class__.__bases__",
        "pick('cube')",
        "pick(object='cube",
        f"exec('open(\"{marker}\", \"w\")')",
        "detect_objects(extra=1)",
        "exit",
    ])
    proc = magma("test-tools", "cube.PickPlace", cwd=workdir, stdin=script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not marker.exists()
    assert proc.stdout.count("refused:") == 6
    assert "keyword arguments only" in proc.stdout
    assert "detect_objects: failed (bad_call)" in proc.stdout  # unknown argument: a bad call


@pytest.mark.sim
def test_two_robots_are_addressed_by_name(workdir):
    script = "\n".join([
        'pick(object="red_cube")',
        'panda-1.pick(object="green_cube")',
        'panda-0.pick(object="red_cube")',
        "exit",
    ])
    proc = magma("test-tools", "sorting.TwoArms", cwd=workdir, stdin="help\n" + script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hint = "this preset has 2 robots: prefix each call with its robot, e.g. panda-0.pick(...)"
    assert proc.stdout.count(hint) == 2  # in the opening banner and in help
    assert "refused: name the robot, e.g. panda-0.pick(...)" in proc.stdout
    assert "panda-1.pick: ok: Picked the green_cube." in proc.stdout
    assert "panda-0.pick: ok: Picked the red_cube." in proc.stdout


@pytest.mark.sim
def test_next_stage_shows_the_user_instruction(workdir):
    script = 'add_area(area="zone_c")\nexit\n'
    proc = magma("test-tools", "sorting.NewZone", cwd=workdir, stdin=script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = proc.stdout.split("panda.add_area: ok", 1)[1]
    assert "[slot 0] next stage 2/3 (action): On the table: yellow_cube in zone_c." in after
    assert "[slot 0] instruction: (user) Put the yellow cube in zone_c." in after


# -- the REPL loop on a stand-in engine (no simulator) -------------------------------------
class FakeExecutor:
    """Two stages; any tool call finishes the first, ``say`` finishes the second (the
    ``Engine`` members the REPL reads)."""

    def __init__(self, robots: tuple[str, ...] = ("panda",)) -> None:
        self.task = NS(name="Fake")
        self.num_slots = 1
        self.robot_names = list(robots)
        self.tool_descriptions = [{"name": "pick", "description": "Pick.", "parameters": {}}]
        self.stages = [
            NS(stage_goal_description="Goal one.", target_tool_calls=1, max_tool_calls=2),
            NS(stage_goal_description="Goal two.", target_tool_calls=0, max_tool_calls=0),
        ]
        self.stage = 0
        self.submitted: list = []

    def view(self) -> NS:
        over = self.stage >= len(self.stages)
        index = min(self.stage, len(self.stages) - 1)
        return NS(kind="user", instruction=f"Do stage {index + 1}.", feedback=None,
                  stage_index=index, num_stages=2, text_only=index == 1, episode_over=over,
                  status="success" if over else "running", tools=self.tool_descriptions)

    def agent_view(self, slot: int) -> NS:
        return self.view()

    def task_of(self, slot: int) -> NS:
        return self.task

    def stages_for(self, task: object = None) -> list:
        return self.stages

    def status(self, slot: int) -> str:
        return self.view().status

    def record(self, slot: int) -> NS:
        return NS(status=self.view().status, reason="", traceback=None)

    def reset(self) -> None:
        self.stage = 0

    def submit(self, decisions: dict) -> dict:
        self.submitted.append(decisions)
        self.stage += 1
        view = self.view()
        outcome = NS(calls=[], message="done", verification=1, stage_success=NS(name="FINISH"),
                     stage_state=NS(name="OPTIMAL"), tool_calls=1, next_view=view,
                     status=view.status)
        return {0: outcome}


class Lines:
    """A line source: ``KeyboardInterrupt`` entries are raised, as Ctrl-C at the prompt."""

    def __init__(self, *items: object, tty: bool = False) -> None:
        self.items = list(items)
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def readline(self) -> str:
        if not self.items:
            return ""
        item = self.items.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item


def test_ctrl_c_at_the_prompt_clears_the_line_and_the_repl_goes_on():
    out = io.StringIO()
    executor = FakeExecutor()
    code = Repl(executor, out).loop(Lines(KeyboardInterrupt(), "pick()\n", "exit\n"))
    assert code == 0
    assert len(executor.submitted) == 1  # the command after Ctrl-C still ran
    assert "next stage 2/2 (text-only): Goal two." in out.getvalue()


def test_ctrl_c_on_a_terminal_shows_a_new_prompt():
    out = io.StringIO()
    code = Repl(FakeExecutor(), out).loop(Lines("stage\n", KeyboardInterrupt(), tty=True))
    assert code == 0  # the end of input (Ctrl-D) leaves
    assert out.getvalue().count(PROMPT) == 3


def test_piped_input_gets_no_prompt_and_no_readline(monkeypatch):
    monkeypatch.setattr(tool_tester, "_load_readline", lambda _: pytest.fail("readline loaded"))
    out = io.StringIO()
    assert Repl(FakeExecutor(), out).loop(Lines("stage\n")) == 0
    assert PROMPT not in out.getvalue()


def test_a_terminal_stdin_is_read_with_readline(monkeypatch):
    loaded, prompts = [], []
    answers = iter(["pick()", "exit"])

    def fake_input(prompt: str) -> str:
        prompts.append(prompt)
        return next(answers)

    monkeypatch.setattr(tool_tester, "_load_readline", lambda complete: loaded.append(complete) or True)
    monkeypatch.setattr("builtins.input", fake_input)
    stdin = Lines(tty=True)
    monkeypatch.setattr(sys, "stdin", stdin)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    executor = FakeExecutor()
    assert Repl(executor, sys.stdout).loop(sys.stdin) == 0
    assert len(loaded) == 1 and prompts == [PROMPT, PROMPT]
    assert len(executor.submitted) == 1
    assert loaded[0]("pi", 0) == "pick(" and loaded[0]("pi", 1) is None  # Tab completion


def test_tab_completes_commands_and_robot_prefixes():
    repl = Repl(FakeExecutor(("panda-0", "panda-1")), io.StringIO())
    assert [repl.complete("panda-", k) for k in range(3)] == ["panda-0.pick(", "panda-1.pick(", None]
    assert repl.complete("st", 0) == "stage" and repl.complete("x", 0) is None


def test_after_a_command_the_stage_and_its_user_instruction_are_shown():
    out = io.StringIO()
    Repl(FakeExecutor(), out).loop(Lines("pick()\n", 'say("done")\n', "exit\n"))
    text = out.getvalue()
    assert "[slot 0] next stage 2/2 (text-only): Goal two." in text
    assert "[slot 0] instruction: (user) Do stage 2." in text
    assert "[slot 0] finished task: success" in text


def test_several_robots_need_a_prefix_in_banner_and_help():
    out = io.StringIO()
    executor = FakeExecutor(("panda-0", "panda-1"))
    Repl(executor, out).loop(Lines("help\n", "pick()\n", "exit\n"))
    text = out.getvalue()
    hint = "this preset has 2 robots: prefix each call with its robot, e.g. panda-0.pick(...)"
    assert text.count(hint) == 2
    assert "refused: name the robot" in text and not executor.submitted
    single = io.StringIO()
    Repl(FakeExecutor(), single).loop(Lines("help\n"))
    assert "prefix each call" not in single.getvalue()


@pytest.mark.sim
def test_reset_starts_the_episode_again(workdir):
    script = 'pick(object="cube")\nreset\npick(object="cube")\nexit\n'
    proc = magma("test-tools", "cube.PickPlace", cwd=workdir, stdin=script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # after the reset the gripper is empty again: the second pick succeeds too (two slots)
    assert proc.stdout.count("[slot 0] panda.pick: ok: Picked the cube.") == 2
    assert proc.stdout.count("[slot 1] panda.pick: ok: Picked the cube.") == 2
    assert "already holds" not in proc.stdout


@pytest.mark.sim
def test_randomized_slots_share_one_public_vocabulary(workdir):
    """``-r``: the tools, parameters and objects in the scenario's public names, the same on
    every slot, so one typed command runs on each; canonical names are refused."""
    first = magma("test-tools", "cube.PickPlace", "-r", "-n", "2", cwd=workdir, stdin="exit\n")
    assert first.returncode == 0, first.stderr
    tools = [line.split("(")[0].strip() for line in first.stdout.splitlines() if line.startswith("  ")]
    assert tools and "pick" not in tools
    assert "testing PickPlace on 2 slot(s)" in first.stdout
    proc = magma("test-tools", "cube.PickPlace", "--randomized", cwd=workdir,
                 stdin='pick(object="cube")\nexit\n')
    assert "[slot 0] panda.pick: failed (bad_call)" in proc.stdout
    assert "[slot 1] panda.pick: failed (bad_call)" in proc.stdout
