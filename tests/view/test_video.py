"""Episode videos: playable mp4s (checked with the imageio-ffmpeg binary), written atomically."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from magma_core.cli import main
from magma_core.render import render_unavailable
from magma_core.render.frames import HEIGHT, WIDTH
from magma_core.render.video import VideoError, captions, frame_count, probe_frames, write_video
from magma_core.runs.videos import default_video_path
from magma_core.store import RunStore, StoreReader

pytestmark = pytest.mark.sim


def test_video_has_the_expected_frames_and_size(viewer_store, tmp_path):
    with RunStore(viewer_store / "magma.db") as store:
        record = store.episode_record("sorting", 0)
        world = store.episode_world("sorting", 0)
    output = tmp_path / "out" / "sorting-0.mp4"
    written = write_video(record, world, 0, output)
    assert written == frame_count(len(record["steps"]))
    assert probe_frames(output) == (written, (WIDTH, HEIGHT))
    assert output.stat().st_size > 10_000
    assert list(output.parent.iterdir()) == [output]  # no temporary file left behind


def test_captions_name_stage_instruction_and_action(viewer_store):
    with RunStore(viewer_store / "magma.db") as store:
        record = store.episode_record("sorting", 0)
    texts = captions(record, 0)
    assert len(texts) == len(record["steps"]) + 1
    assert "start" in texts[0].title and "Sort the cubes" in texts[0].instruction
    assert texts[1].action == "panda.pick(object='red_cube')  [ok]"
    assert "decision 1/" in texts[1].title and "stage 0 ObjectsToZones" in texts[1].title
    assert texts[-1].action.startswith("answer: ")
    assert "Sort the cubes" in texts[2].instruction  # the user's words, not engine feedback


def test_a_failed_video_leaves_the_target_untouched(viewer_store, tmp_path):
    with RunStore(viewer_store / "magma.db") as store:
        record = store.episode_record("sorting", 0)
    target = tmp_path / "keep.mp4"
    target.write_bytes(b"old")
    with pytest.raises(VideoError, match="without world states"):
        write_video(record, None, 0, target)
    broken = {"scene": {}, "states": [None]}
    with pytest.raises(VideoError, match="recorded world states"):
        write_video(record, broken, 0, target)
    assert target.read_bytes() == b"old" and sorted(tmp_path.iterdir()) == [target]


@pytest.fixture(params=["forced-off", "this-machine"])
def render_state(request, monkeypatch):
    """Both states on every machine: the render device forced off (``MAGMA_RENDER=off``), and
    this machine as it is (a device where ``make render`` installed one)."""
    if request.param == "forced-off":
        monkeypatch.setenv("MAGMA_RENDER", "off")
    else:
        monkeypatch.delenv("MAGMA_RENDER", raising=False)
    return render_unavailable()


def test_runs_video_command(viewer_store, tmp_path, capsys, render_state):
    output = tmp_path / "machine.mp4"
    code = main(["runs", "video", "machine", "--episode", "0", "--out", str(viewer_store),
                 "--output", str(output), "--kind", "schematic"])
    assert code == 0 and capsys.readouterr().out.strip() == f"wrote {output}"
    assert probe_frames(output)[1] == (WIDTH, HEIGHT)
    for argv, message in (
        (["runs", "video", "machine", "--episode", "4", "--out", str(viewer_store)], "has no episode 4"),
        (["runs", "video", "machine", "--episode", "0", "--out", str(tmp_path)], "no run store"),
        (["runs", "video", "machine", "--episode", "0", "--out", str(viewer_store),
          "--output", str(tmp_path / "x.gif")], "must name an .mp4"),
        (["runs", "video", "machine", "--episode", "0", "--out", str(viewer_store),
          "--output", str(tmp_path / "x.mp4"), "--motion-frames", "-1"], "must be 0 or more"),
    ):  # whatever the kind and the machine: one line, exit 2, nothing written
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "x.mp4").exists()


def test_runs_video_auto_kind_in_both_states(viewer_store, tmp_path, capsys, render_state):
    """``--kind auto`` (the default): without a render device the schematic video and one
    line on stderr saying why (exit 0); with one, the rendered video and nothing on stderr.
    ``--kind rendered`` without a device: the one-line reason, exit 2, no file."""
    output = tmp_path / "auto.mp4"
    code = main(["runs", "video", "machine", "--episode", "0", "--out", str(viewer_store),
                 "--output", str(output), "--motion-frames", "1"])
    captured = capsys.readouterr()
    assert code == 0 and captured.out.strip() == f"wrote {output}"
    decisions = len(StoreReader(viewer_store).episode("machine", 0)["record"]["steps"])
    assert probe_frames(output) == (frame_count(decisions, 1), (WIDTH, HEIGHT))
    if render_state is None:
        assert captured.err == ""
    else:
        assert captured.err == f"schematic videos: {render_state}\n"  # one line, any width
        assert main(["runs", "video", "machine", "--episode", "0", "--out", str(viewer_store),
                     "--output", str(tmp_path / "r.mp4"), "--kind", "rendered"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and render_state in err and "cannot render videos" in err
        assert not (tmp_path / "r.mp4").exists()


def test_run_with_videos_for_failures_only(tmp_path, capsys):
    code = main(["run", "cube.PickPlace", "--episodes", "1", "--out", str(tmp_path), "--name", "pp",
                 "--videos", "failures", "--video-kind", "schematic"])
    assert code == 0
    assert not default_video_path(tmp_path, "pp", 0).exists()  # it succeeded
    code = main(["run", "cube.PickPlace", "--episodes", "1", "--out", str(tmp_path), "--name", "pp",
                 "--videos", "all", "--video-kind", "schematic"])
    assert code == 0
    video = default_video_path(tmp_path, "pp", 0)
    assert video == Path(tmp_path) / "videos" / "pp" / "episode-0.mp4"
    assert probe_frames(video)[0] > 0


def test_view_command_refuses_bad_ports_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["view", "--out", str(tmp_path), "--port", "70000"])
    assert exit_info.value.code == 2
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        assert main(["view", "--out", str(tmp_path), "--port", str(port)]) == 2
        assert "cannot listen on 127.0.0.1" in capsys.readouterr().err
    finally:
        taken.close()
