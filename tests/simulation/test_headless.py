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
    assert kwargs["sim_backend"] == "physx_cpu"
    assert (kwargs.get("render_backend") == "none") == patched


def test_never_applied_when_a_render_device_exists(monkeypatch):
    import sapien.render

    from magma_core.simulation.envs import headless

    original = sapien.render.RenderMaterial
    monkeypatch.setattr(headless, "_PATCHED", False)
    monkeypatch.setattr(headless, "has_render_device", lambda: True)
    assert headless.ensure_headless() is False
    assert sapien.render.RenderMaterial is original
    assert "render_backend" not in headless.backend_kwargs()


def test_stand_in_accepts_builder_calls():
    from magma_core.simulation.envs.headless import _HeadlessRenderMaterial

    material = _HeadlessRenderMaterial(base_color=[1, 0, 0, 1])
    material.set_roughness(0.5)
    assert material.base_color == [1, 0, 0, 1]
    with pytest.raises(AttributeError):
        material.nonexistent  # noqa: B018
