"""The RenderMaterial stand-in is installed only where nothing can render."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.sim


def test_shim_matches_the_machine():
    import sapien.render

    from magma_core.simulation.envs import headless

    patched = headless.ensure_headless()
    assert patched == (not headless.has_render_device())
    is_stand_in = sapien.render.RenderMaterial is headless._HeadlessRenderMaterial
    assert is_stand_in == patched
    kwargs = headless.backend_kwargs()
    assert kwargs == {"sim_backend": "physx_cpu", "render_backend": "none"}


def test_never_applied_when_a_render_device_exists(monkeypatch):
    import sapien.render

    from magma_core.simulation.envs import headless

    original = sapien.render.RenderMaterial
    monkeypatch.setattr(headless, "_PATCHED", False)
    monkeypatch.setattr(headless, "has_render_device", lambda: True)
    assert headless.ensure_headless() is False
    assert sapien.render.RenderMaterial is original
    # a world that renders nothing pays nothing for cameras, even where it could render
    assert headless.backend_kwargs()["render_backend"] == "none"


def test_render_backend_only_when_asked_and_available(monkeypatch):
    from magma_core.simulation.envs import headless

    monkeypatch.setattr(headless, "render_unavailable", lambda: None)
    assert headless.backend_kwargs(render=True)["render_backend"] == "cpu"
    assert headless.backend_kwargs(gpu=True, render=True)["render_backend"] == "gpu"
    monkeypatch.setattr(headless, "render_unavailable", lambda: "no render device")
    assert headless.backend_kwargs(render=True)["render_backend"] == "none"


def test_magma_render_off_says_so_in_one_line(monkeypatch):
    from magma_core.simulation.envs.cameras import render_unavailable

    monkeypatch.setenv("MAGMA_RENDER", "off")
    reason = render_unavailable()
    assert reason is not None and "MAGMA_RENDER=off" in reason and "\n" not in reason


def test_stand_in_accepts_builder_calls():
    from magma_core.simulation.envs.headless import _HeadlessRenderMaterial

    material = _HeadlessRenderMaterial(base_color=[1, 0, 0, 1])
    material.set_roughness(0.5)
    assert material.base_color == [1, 0, 0, 1]
    with pytest.raises(AttributeError):
        material.nonexistent  # noqa: B018
