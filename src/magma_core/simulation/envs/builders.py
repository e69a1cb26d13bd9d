"""The predecessor's scene builders on ``DefaultEnv``: ``build_a_zone`` and ``create_box``.

``DefaultEnv`` inherits them from :class:`LegacyBuilders`; new worlds may prefer
``build_zone`` / ``build_box`` (placed on the table, observed in ``obs["extra"]``).
"""

from __future__ import annotations

from collections.abc import Sequence

import sapien
from mani_skill.envs.scene import ManiSkillScene
from mani_skill.utils.structs.actor import Actor

__all__ = ["LegacyBuilders"]


def _material(color: Sequence[float]) -> sapien.render.RenderMaterial:
    return sapien.render.RenderMaterial(base_color=list(color))


class LegacyBuilders:
    """Mixin for ``DefaultEnv`` (needs ``self.scene``)."""

    scene: ManiSkillScene

    def build_a_zone(
        self,
        width: float = 0.2,
        length: float = 0.2,
        color: Sequence[float] = (0.2, 0.7, 0.2, 1.0),
        collision: bool = False,
        name: str = "zone",
    ) -> Actor:
        """A thin kinematic box (half-height 1 cm), visual only unless ``collision``.

        Placed at the origin: set its pose in ``_initialize_episode``.
        """
        half = [width / 2, length / 2, 0.01]
        builder = self.scene.create_actor_builder()
        builder.add_box_visual(half_size=half, material=_material(color))
        if collision:
            builder.add_box_collision(half_size=half)
        builder.initial_pose = sapien.Pose()
        return builder.build_kinematic(name=name)

    def create_box(
        self,
        thickness: float = 0.01,
        color: Sequence[float] = (0.6, 0.4, 0.2, 1.0),
        size: float = 0.2,
        height: float = 0.05,
        name: str = "box",
        add_bottom_wall: bool = False,
        initial_pose: sapien.Pose | None = None,
    ) -> Actor:
        """An open square container of four walls (``size`` wide, ``height`` tall, walls
        ``thickness`` thick), kinematic, with an optional bottom; origin at its floor centre."""
        builder = self.scene.create_actor_builder()
        material = _material(color)
        t, s, h = thickness / 2, size / 2, height / 2
        walls = [
            ((s - t, 0, h), (t, s, h)),
            ((-s + t, 0, h), (t, s, h)),
            ((0, s - t, h), (s, t, h)),
            ((0, -s + t, h), (s, t, h)),
        ]
        if add_bottom_wall:
            walls.append(((0, 0, t), (s, s, t)))
        for position, half in walls:
            pose = sapien.Pose(list(position))
            builder.add_box_collision(pose=pose, half_size=list(half))
            builder.add_box_visual(pose=pose, half_size=list(half), material=material)
        builder.initial_pose = initial_pose or sapien.Pose()
        return builder.build_kinematic(name=name)
