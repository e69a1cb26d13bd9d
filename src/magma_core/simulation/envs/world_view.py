"""What a top-down replay needs from a world beyond its state: shapes and robot links.

``scene_geometry(env)`` describes the actors (boxes with half sizes, colours and a kind:
``object``, ``zone``, ``table``) and the robots; shapes built with ``DefaultEnv.build_box``
or ``build_zone`` come from the world itself, other actors' boxes from their collision
shapes. ``link_positions(env, row)`` gives each robot's link positions (xyz) in one
env row, enough to draw an arm from above.
"""

from __future__ import annotations

import sapien
from mani_skill.envs.sapien_env import BaseEnv
from mani_skill.utils.structs.actor import Actor

from magma_core.json_types import JSONDict

__all__ = ["link_positions", "scene_geometry"]


def _collision_box(actor: Actor) -> list[float] | None:
    """Half sizes of the first box collision shape of ``actor`` (None if it has none)."""
    for entity in getattr(actor, "_objs", [])[:1]:
        for component in entity.get_components():
            if not isinstance(component, sapien.physx.PhysxRigidBaseComponent):
                continue
            for shape in component.get_collision_shapes():
                if isinstance(shape, sapien.physx.PhysxCollisionShapeBox):
                    return [round(float(v), 4) for v in shape.half_size]
    return None


def scene_geometry(env: BaseEnv) -> JSONDict:
    """Actors' shapes, colours and kinds, and the robot names, of ``env`` (unwrapped)."""
    shapes: JSONDict = dict(getattr(env, "actor_shapes", {}) or {})
    for name, actor in env.scene.actors.items():
        if name in shapes:
            continue
        half = _collision_box(actor)
        if half is None:
            continue
        kind = "table" if "table" in name else "object"
        shapes[name] = {"shape": "box", "half_size": half, "color": None, "kind": kind}
    robots = list(getattr(env, "robot_names", []) or [])
    return {"actors": shapes, "robots": robots, "table_top_z": 0.0}


def link_positions(env: BaseEnv, row: int) -> dict[str, JSONDict]:
    """Robot name → ``{"links": [xyz, ...], "fingers": [xyz, ...], "tcp": xyz | None}`` in
    env row ``row``: the arm's links in kinematic order, its finger links and its TCP."""
    agents = getattr(env, "agents", None)
    if not isinstance(agents, dict):
        agent = env.agent
        agents = dict(agent.agents_dict) if hasattr(agent, "agents_dict") else {"robot": agent}
    out: dict[str, JSONDict] = {}
    for name, agent in agents.items():
        links, fingers = [], []
        for link in agent.robot.links:
            xyz = [float(v) for v in link.pose.raw_pose[row, :3].tolist()]
            if "finger" in link.name:
                if "pad" not in link.name:
                    fingers.append(xyz)
            elif "tcp" not in link.name:
                links.append(xyz)
        tcp = getattr(agent, "tcp", None)
        tcp_xyz = [float(v) for v in tcp.pose.raw_pose[row, :3].tolist()] if tcp is not None else None
        out[name] = {"links": links, "fingers": fingers, "tcp": tcp_xyz}
    return out
