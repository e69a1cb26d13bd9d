"""Annotated mp4 videos of stored episodes, made from the recorded world states.

A video is a picture of each recorded world state (the start, then after each decision),
held for a moment, with ``motion_frames`` pictures of the states in between while the world
moves, and a footer naming the stage, the instruction and the current action or answer. The
picture is the top-down schematic (:mod:`.frames`, ``kind="schematic"``: needs nothing) or
the world rendered through its camera (:mod:`.rendered`, ``kind="rendered"``: needs a
render device; ``kind="auto"`` picks it when there is one: :func:`resolve_kind`). Frames go to the ffmpeg binary
of the ``imageio-ffmpeg`` package (no download at run time), into a temporary file that
replaces the target only when complete. Reading a stored episode is the caller's
(``magma_core.runs.videos``): this module takes the record and world states it was given.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from magma_core.json_types import JSONDict
from magma_core.render.device import render_unavailable
from magma_core.render.frames import HEIGHT, WIDTH, Caption, FrameDrawer, blend

FPS = 10
START_HOLD = 10  # frames showing the start state
MOVE = 6  # frames moving from one state to the next
HOLD = 10  # frames holding each state after a decision
END_HOLD = 10  # extra frames on the last state


class VideoError(RuntimeError):
    """A video could not be made (no world states recorded, or ffmpeg failed)."""


KINDS = ("auto", "rendered", "schematic")


def resolve_kind(kind: str) -> tuple[str, str | None]:
    """(the kind of video to make, a one-line note or None): ``auto`` is ``rendered`` where a
    render device is, else ``schematic`` with the note saying why; ``rendered`` without a
    device is a :class:`VideoError` with the one-line reason."""
    if kind not in KINDS:
        raise VideoError(f"unknown video kind {kind!r}; choose one of {', '.join(KINDS)}")
    if kind == "schematic":
        return kind, None
    reason = render_unavailable()
    if reason is None:
        return "rendered", None
    if kind == "rendered":
        raise VideoError(f"cannot render videos: {reason}")
    return "schematic", f"schematic videos: {reason}"

#: Draws one frame: (world state or None, caption) -> a WIDTH x HEIGHT RGB image.
Picture = Callable[[JSONDict | None, Caption], Any]


def frame_count(decisions: int, motion_frames: int = MOVE) -> int:
    """How many frames the video of an episode with ``decisions`` steps has."""
    return START_HOLD + decisions * (motion_frames + HOLD) + END_HOLD


def ffmpeg_exe() -> str:
    """The ffmpeg binary shipped in the ``imageio-ffmpeg`` wheel."""
    import imageio_ffmpeg

    return imageio_ffmpeg.get_ffmpeg_exe()


def _call_text(call: JSONDict) -> str:
    arguments = call.get("arguments")
    if isinstance(arguments, dict):
        args = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    else:
        args = str(arguments or "")
    robot = call.get("robot") or call.get("target_robot_name")
    mark = "" if "ok" not in call else ("  [ok]" if call.get("ok") else "  [failed]")
    return f"{robot + '.' if robot else ''}{call.get('tool') or call.get('name')}({args}){mark}"


def captions(record: JSONDict, episode: int) -> list[Caption]:
    """One caption per world state: the start, then after each decision."""
    stages = record.get("stages", [])
    steps = record.get("steps", [])

    def stage_name(index: int) -> str:
        return stages[index]["name"] if 0 <= index < len(stages) else "?"

    def user_text(step: JSONDict, last: str) -> str:
        said = [m.get("content", "") for m in step.get("inputs", []) if m.get("kind") == "user"]
        return "\n".join(said) if said else last

    instruction = user_text(steps[0], "") if steps else ""
    out = [
        Caption(
            title=f"{record.get('task', '')}  ·  episode {episode}  ·  start  ·  stage 0/{len(stages)}"
            f" {stage_name(0)}",
            instruction=instruction,
            action="",
            total=len(steps),
        )
    ]
    for i, step in enumerate(steps):
        decision = step.get("decision") or {}
        calls = step.get("calls") or decision.get("tool_calls") or []
        if calls:
            action = "   ".join(_call_text(c) for c in calls)
        elif decision.get("say"):
            action = f"answer: {decision['say']}"
        else:
            action = f"invalid decision: {decision.get('error')}" if decision.get("error") else "(nothing)"
        verdict = step.get("stage_success", "")
        if verdict == "FINISH":
            verdict = f"FINISH {step.get('stage_state', '')}"
        status = "" if step.get("status") == "running" else f"  ·  episode {step.get('status')}"
        instruction = user_text(step, instruction)
        out.append(
            Caption(
                title=f"{record.get('task', '')}  ·  episode {episode}  ·  decision {i + 1}/{len(steps)}"
                f"  ·  stage {step.get('stage_index')} {stage_name(step.get('stage_index', -1))}"
                f"  ·  {verdict}{status}",
                instruction=instruction,
                action=action,
                position=i + 1,
                total=len(steps),
            )
        )
    return out


def frames(record: JSONDict, world: JSONDict, episode: int, *,
           picture: Picture | None = None, motion_frames: int = MOVE) -> Iterator[bytes]:
    """The raw RGB frames of the episode's video, in order (see :func:`frame_count`):
    ``picture`` draws each (default: the top-down schematic), ``motion_frames`` pictures
    of the states between two decisions show the motion."""
    states = world.get("states") or []
    steps = record.get("steps", [])
    if len(states) != len(steps) + 1 or not any(states):
        raise VideoError(
            f"episode {episode} has {len(states)} recorded world states for {len(steps)} decisions"
        )
    if picture is None:
        picture = FrameDrawer(world.get("scene", {}), states).frame
    texts = captions(record, episode)
    still = picture(states[0], texts[0]).tobytes()
    for _ in range(START_HOLD):
        yield still
    for i in range(1, len(states)):
        for m in range(1, motion_frames + 1):
            yield picture(blend(states[i - 1], states[i], m / (motion_frames + 1)), texts[i]).tobytes()
        still = picture(states[i], texts[i]).tobytes()
        for _ in range(HOLD + (END_HOLD if i == len(states) - 1 else 0)):
            yield still
    if len(states) == 1:
        for _ in range(END_HOLD):
            yield still


def write_video(record: JSONDict, world: JSONDict | None, episode: int, output: Path,
                *, picture: Picture | None = None, motion_frames: int = MOVE) -> int:
    """Write the episode's video to ``output`` (mp4, H.264) atomically; returns the frame
    count. ``picture`` and ``motion_frames``: see :func:`frames`."""
    if world is None:
        raise VideoError(f"episode {episode} was stored without world states (an older store?)")
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp_name = tempfile.mkstemp(prefix=f".{output.stem}.", suffix=".mp4", dir=output.parent)
    os.close(handle)
    command = [
        ffmpeg_exe(), "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
        "-s", f"{WIDTH}x{HEIGHT}", "-r", str(FPS), "-i", "-", "-c:v", "libx264",
        "-preset", "veryfast", "-crf", "23", "-pix_fmt", "yuv420p", "-movflags", "+faststart",
        tmp_name,
    ]
    count = 0
    try:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdin is not None
        try:
            for frame in frames(record, world, episode, picture=picture,
                                motion_frames=motion_frames):
                process.stdin.write(frame)
                count += 1
        except BrokenPipeError:
            pass
        finally:
            process.stdin.close()
        error = process.stderr.read().decode(errors="replace") if process.stderr else ""
        if process.wait() != 0:
            raise VideoError(f"ffmpeg failed: {error.strip()[-300:]}")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_name, 0o666 & ~umask)
        os.replace(tmp_name, output)
    except BaseException:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
        raise
    return count


def probe_frames(path: Path) -> tuple[int, tuple[int, int]]:
    """(frame count, (width, height)) of a video, read by decoding it with ffmpeg."""
    import re

    result = subprocess.run(
        [ffmpeg_exe(), "-hide_banner", "-i", str(path), "-map", "0:v:0", "-f", "null", "-"],
        capture_output=True, text=True, check=False,
    )
    text = result.stderr
    counts = re.findall(r"frame=\s*(\d+)", text)
    size = re.search(r"Video: .*?, (\d{2,5})x(\d{2,5})", text)
    if result.returncode != 0 or not counts or size is None:
        raise VideoError(f"cannot read {path}: {text.strip()[-300:]}")
    return int(counts[-1]), (int(size.group(1)), int(size.group(2)))
