"""``magma test-tools`` driven through stdin, on the real simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import magma

pytestmark = pytest.mark.sim


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
    assert "next stage 2/2" in out


def test_state_updates_and_protection_apply(workdir):
    script = "switch_machine(on=True)\nreset\nexit\n"
    proc = magma("test-tools", "cube.Machine", cwd=workdir, stdin=script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "panda.switch_machine: ok: Machine switched on." in proc.stdout
    assert "stage verification: 1" in proc.stdout  # the goal reads the updated extra state


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


def test_two_robots_are_addressed_by_name(workdir):
    script = "\n".join([
        'pick(object="red_cube")',
        'panda-1.pick(object="green_cube")',
        'panda-0.pick(object="red_cube")',
        "exit",
    ])
    proc = magma("test-tools", "sorting.TwoArms", cwd=workdir, stdin=script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "refused: name the robot, e.g. panda-0.pick(...)" in proc.stdout
    assert "panda-1.pick: ok: Picked the green_cube." in proc.stdout
    assert "panda-0.pick: ok: Picked the red_cube." in proc.stdout
