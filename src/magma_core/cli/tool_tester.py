"""``magma test-tools PRESET``: try a preset's tools by hand, through the one engine.

Every command runs on every slot via ``Executor.submit``, so state updates, actor protection,
budgets and stage verification apply exactly as in a run. Commands are parsed with ``ast``
(see ``repl_parser``) and never evaluated.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from magma_core.cli.ctor_args import accept_ctor_args
from magma_core.cli.repl_parser import ReplCommand, ReplSyntaxError, parse_command
from magma_core.cli.run import add_skills_option, non_negative_int, positive_int
from magma_core.json_types import JSONDict
from magma_core.text_safety import safe_text

if TYPE_CHECKING:
    from magma_core.simulation.executor.engine import Engine
    from magma_core.simulation.executor.records import AgentView, StepOutcome
    from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor
    from magma_core.simulation.skills import BaseSkill
    from magma_core.simulation.tasks import BaseTask

PROMPT = "magma> "
HELP = """commands:
  tool(k=v, ...)          call a tool on every slot (keyword arguments, literal values)
  robot.tool(k=v, ...)    call it on a given robot
  say("text")             answer a text-only stage
  stage                   show each slot's current stage
  reset                   start the episodes again
  help                    this text
  exit                    leave (or Ctrl-D); Ctrl-C clears the line"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("test-tools", help="call a preset's tools by hand (a REPL)")
    parser.add_argument("preset", help="scenario.Preset, e.g. cube.PickPlace")
    accept_ctor_args(parser)
    parser.add_argument("--slots", "--nb-env", "-n", type=positive_int, default=2,
                        help="slots to run, each command on every one (2)")
    parser.add_argument("--randomized", "-r", action="store_true",
                        help="each slot sees random public names (of tools, parameters and "
                        "objects) drawn from the scenario's randomization YAML")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed of slot 0 (0)")
    parser.add_argument("--judge", default=None, help="openai:MODEL[@BASE_URL] for JUDGE stages")
    add_skills_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from magma_core.judge import AcceptAllJudge
    from magma_core.runs.assembly import (
        build_judge,
        check_task,
        load_task,
        open_executor,
        task_skills,
    )

    task = load_task(args.preset, args.ctor_args)
    judge = build_judge(args.judge)
    if judge is None:
        judge = AcceptAllJudge()
        notice = "no --judge given: JUDGE stages accept any non-empty answer"
    else:
        notice = ""
    check_task(task, judge, args.preset)
    skills = task_skills(args.preset, args.skills)
    executor = open_executor(task, args.slots, args.seed, judge, "auto", skills=skills)
    try:
        engine = randomized_engine(executor, task, args, skills) if args.randomized else executor
        return Repl(engine, sys.stdout, notice).loop(sys.stdin)
    finally:
        executor.close()


def randomized_engine(executor: Engine, task: BaseTask, args: argparse.Namespace, skills: Sequence[type[BaseSkill]] | None) -> PublicVocabularyExecutor:
    """The engine behind the public-names seam, every slot in the randomization drawn with
    ``args.seed`` (as ``magma run --randomized`` draws episode 0's): one command, typed in
    those public names, runs on every slot."""
    from magma_core.cli import CliError
    from magma_core.scenarios.episode_tasks import EpisodeTasks
    from magma_core.simulation.executor.vocabulary import PublicVocabularyExecutor

    try:
        tasks = EpisodeTasks(task, randomized=True, skills=skills)
    except ValueError as exc:
        raise CliError(f"{args.preset}: {exc}") from None
    engine = PublicVocabularyExecutor(executor)
    randomization = tasks.randomization(task, args.seed)
    for slot in range(executor.num_slots):
        engine.set_vocabulary(slot, randomization)
        engine.reset_slot(slot, args.seed + slot)
    return engine


class Repl:
    """Reads commands and prints, per slot, the tool status, the stage verification (-1/0/1),
    the next stage and whether the task is finished."""

    def __init__(self, executor: Engine, out: TextIO, notice: str = "") -> None:
        self.executor = executor
        self.out = out
        self.notice = notice

    def _tools(self) -> list[JSONDict]:
        """The tool schema the engine's slots offer (slot 0's: every slot runs one task)."""
        return self.executor.agent_view(0).tools

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def loop(self, lines: TextIO) -> int:
        """Read commands from ``lines`` until EOF or ``exit``. A terminal gets a prompt, and
        line editing and history (``readline``) when ``lines`` is ``sys.stdin``; Ctrl-C at
        the prompt drops the line typed so far."""
        robots = self.executor.robot_names
        self.say(f"testing {self.executor.task_of(0).name} on {self.executor.num_slots} slot(s); "
                 f"robots: {', '.join(robots)}; type help")
        if len(robots) > 1:
            self.say(self.robot_hint())
        if self.notice:
            self.say(self.notice)
        self.show_tools()
        self.show_stage()
        read = self.line_reader(lines)
        while True:
            try:
                line = read()
            except KeyboardInterrupt:  # Ctrl-C at the prompt: a fresh line, not the end
                self.say()
                continue
            if not line:
                return 0
            if not line.strip():
                continue
            try:
                command = parse_command(line)
            except ReplSyntaxError as exc:
                self.say(f"refused: {exc}")
                continue
            if command.kind == "word" and command.name == "exit":
                return 0
            self.handle(command)

    def line_reader(self, lines: TextIO) -> Callable[[], str]:
        """A function returning the next line ("" at the end). Piped input is read as it is;
        a terminal gets the prompt, with ``readline`` editing when it is this process's stdin."""
        if not lines.isatty():
            return lines.readline
        if lines is sys.stdin and self.out is sys.stdout and _load_readline(self.complete):
            def read_edited() -> str:
                try:
                    return input(PROMPT) + "\n"
                except EOFError:  # Ctrl-D
                    self.say()
                    return ""

            return read_edited

        def read_prompted() -> str:
            self.out.write(PROMPT)
            self.out.flush()
            return lines.readline()

        return read_prompted

    def complete(self, text: str, state: int) -> str | None:
        """``readline`` completer: the ``state``-th command starting with ``text``."""
        tools = [f"{t['name']}(" for t in self._tools()]
        robots = self.executor.robot_names
        if len(robots) > 1:
            tools = [f"{robot}.{tool}" for robot in robots for tool in tools]
        options = [*tools, 'say("', "stage", "reset", "help", "exit"]
        matches = [option for option in options if option.startswith(text)]
        return matches[state] if state < len(matches) else None

    def robot_hint(self) -> str:
        robots = self.executor.robot_names
        tools = [t["name"] for t in self._tools()] or ["tool"]
        return (f"this preset has {len(robots)} robots: prefix each call with its robot, "
                f"e.g. {robots[0]}.{tools[0]}(...)")

    def handle(self, command: ReplCommand) -> None:
        from magma_core.simulation.data_structures import Decision, ToolCall

        if command.kind == "word":
            if command.name == "help":
                self.say(HELP)
                if len(self.executor.robot_names) > 1:
                    self.say(self.robot_hint())
            elif command.name == "stage":
                self.show_stage()
            elif command.name == "reset":
                self.executor.reset()
                self.say("reset: every slot starts its episode again")
                self.show_stage()
            return
        if command.kind == "say":
            decision = Decision(say=command.text)
        else:
            robots = self.executor.robot_names
            if command.robot is None and len(robots) > 1:
                self.say(f"refused: name the robot, e.g. {robots[0]}.{command.name}(...); "
                         f"robots: {', '.join(robots)}")
                return
            robot = command.robot or robots[0]
            decision = Decision(tool_calls=[ToolCall(command.name, command.arguments, robot)])
        running = [s for s in range(self.executor.num_slots) if self.executor.status(s) == "running"]
        if not running:
            self.say("every slot has finished its episode; type reset to start again")
            return
        before = {slot: self.executor.agent_view(slot).stage_index for slot in running}
        outcomes = self.executor.submit({slot: decision for slot in running})
        for slot in running:
            self.show_outcome(slot, outcomes[slot], before[slot])

    def show_outcome(self, slot: int, outcome: StepOutcome, stage_before: int | None = None) -> None:
        for call in outcome.calls:
            verdict = "ok" if call.ok else f"failed ({call.failure_flag.value})"
            self.say(f"[slot {slot}] {call.robot}.{call.tool}: {verdict}: {call.message}")
        if outcome.message:
            self.say(f"[slot {slot}] status: {outcome.message}")
        verification = "-" if outcome.verification is None else str(outcome.verification)
        self.say(
            f"[slot {slot}] stage verification: {verification}  "
            f"({outcome.stage_success.name}, {outcome.stage_state.name}, "
            f"{outcome.tool_calls} tool calls)"
        )
        view = outcome.next_view
        self.show_skills(slot)
        if view.episode_over:
            self.say(f"[slot {slot}] finished task: {outcome.status}")
            self.show_end(slot)
            return
        lead = "still on stage" if view.stage_index == stage_before else "next stage"
        self.say(f"[slot {slot}] {lead} {self.describe_stage(view)}")
        if view.kind == "user":
            self.say(f"[slot {slot}] instruction: {_shown(view)}")

    def show_end(self, slot: int) -> None:
        """Why the slot's episode ended (unless it succeeded) and, after an error in the
        scenario (a tool, verifier, goal, transition or state update that raised or handed
        back bad state), the traceback."""
        record = self.executor.record(slot)
        if record.status == "success":
            return
        if record.reason:
            self.say(f"[slot {slot}] reason: {safe_text(record.reason)}")
        if record.traceback:
            self.say(f"[slot {slot}] traceback:")
            self.say(safe_text(record.traceback).rstrip())

    def show_skills(self, slot: int) -> None:
        """With skills: each robot's status, and the work suspended by an interruption."""
        if not getattr(self.executor, "has_skills", False):
            return
        skills = self.executor.skill_state(slot)
        statuses = self.executor.agent_view(slot).attributes.get("robot_statuses", {})
        shown = ", ".join(f"{robot}: {status}" for robot, status in statuses.items())
        self.say(f"[slot {slot}] robot statuses: {shown}")
        for robot, label in skills.to_dict()["suspended"].items():
            self.say(f"[slot {slot}] suspended on {robot}: {label}")

    def describe_stage(self, view: AgentView, limits: bool = False) -> str:
        """``k/n (kind): goal``; with ``limits``, the stage's target and maximum tool calls."""
        stage = self.executor.stages_for()[view.stage_index]
        kind = "text-only" if view.text_only else "action"
        if limits:
            kind += f", target {stage.target_tool_calls}, max {stage.max_tool_calls}"
        return (f"{view.stage_index + 1}/{view.num_stages} ({kind}): "
                f"{stage.stage_goal_description}")

    def show_stage(self) -> None:
        for slot in range(self.executor.num_slots):
            view = self.executor.agent_view(slot)
            if view.episode_over:
                self.say(f"[slot {slot}] finished task: {view.status}")
                continue
            self.say(f"[slot {slot}] stage {self.describe_stage(view, limits=True)}")
            self.say(f"[slot {slot}] instruction: {_shown(view)}")

    def show_tools(self) -> None:
        for tool in self._tools():
            params = ", ".join(
                f"{name}: {spec.get('type', 'str')}{'' if spec.get('required', True) else '?'}"
                for name, spec in tool["parameters"].items()
            )
            self.say(f"  {tool['name']}({params}) - {tool['description']}")


def _shown(view: AgentView) -> str:
    """The view's instruction: the user's words, or the engine's feedback text."""
    if view.kind == "user":
        return f"(user) {view.instruction}"
    infos = (view.feedback or {}).get("infos") if isinstance(view.feedback, dict) else None
    return f"(env) {infos or view.instruction or 'continue'}"


def _load_readline(completer: Callable[[str, int], str | None]) -> bool:
    """Import ``readline`` (importing it gives ``input`` line editing and history) and make
    Tab complete with ``completer``; False where the platform has no ``readline``."""
    try:
        import readline
    except ImportError:
        return False
    readline.set_completer(completer)
    readline.set_completer_delims(" \t\n(),=")
    if "libedit" in (readline.__doc__ or ""):  # macOS's readline
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    return True
