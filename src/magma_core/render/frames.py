"""Top-down frames of an episode's recorded world states, drawn with Pillow.

The same picture as the viewer's replay (``static/replay.js``): the table from above, world
x pointing up (away from the robot), y to the left; zones as tinted squares, objects as
rotated boxes (lifted ones with a shadow), each robot as its chain of links, fingers and TCP;
and a footer with the stage, the instruction and the current action or answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from magma_core.json_types import JSONValue

WIDTH, HEIGHT = 960, 720  # frame size (even, for yuv420p)
FOOTER = 168  # footer height in pixels
SUPERSAMPLE = 2  # drawn this many times larger, then reduced: smooth edges
LIFTED = 0.012
ARM_COLORS = [(52, 58, 64), (95, 61, 196), (11, 114, 133), (134, 46, 156)]
BACKGROUND = (217, 221, 227)
TABLE = (234, 223, 203)


def yaw_of(q: Sequence[float]) -> float:
    w, x, y, z = q
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def corners(pose: Sequence[float], half: Sequence[float]) -> list[tuple[float, float]]:
    """World xy of a box's four corners, turned by the pose's yaw."""
    x, y = pose[0], pose[1]
    yaw = yaw_of(pose[3:7]) if len(pose) >= 7 else 0.0
    c, s = math.cos(yaw), math.sin(yaw)
    out = []
    for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        dx, dy = a * half[0], b * half[1]
        out.append((x + c * dx - s * dy, y + s * dx + c * dy))
    return out


def _is_table(name: str, shape: dict | None) -> bool:
    return shape.get("kind") == "table" if shape else ("table" in name or "ground" in name)


def scene_bounds(scene: dict, states: Sequence[dict | None]) -> tuple[float, float, float, float]:
    """(min_x, max_x, min_y, max_y) holding every object, zone and robot link, padded."""
    xs: list[float] = []
    ys: list[float] = []
    shapes = scene.get("actors", {})
    for state in states:
        if not state:
            continue
        for name, pose in state.get("actors", {}).items():
            shape = shapes.get(name)
            if _is_table(name, shape):
                continue
            for x, y in corners(pose, (shape or {}).get("half_size", [0.02, 0.02])):
                xs.append(x)
                ys.append(y)
        for robot in state.get("robots", {}).values():
            for point in robot.get("links", []):
                xs.append(point[0])
                ys.append(point[1])
    if not xs:
        return -0.5, 0.5, -0.5, 0.5
    pad = 0.07
    return min(xs) - pad, max(xs) + pad, min(ys) - pad, max(ys) + pad


@dataclass
class Caption:
    """The footer's lines for one frame."""

    title: str
    instruction: str
    action: str
    position: int = 0  # decisions made so far
    total: int = 0  # decisions in the episode


def _font(size: int) -> ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


class FrameDrawer:
    """Draws frames of one episode (``scene``, ``states``) at :data:`WIDTH` x :data:`HEIGHT`."""

    def __init__(self, scene: dict, states: Sequence[dict | None]) -> None:
        self.scene = scene or {}
        self.shapes = self.scene.get("actors", {})
        self.min_x, self.max_x, self.min_y, self.max_y = scene_bounds(self.scene, states)
        k = SUPERSAMPLE
        self.area = (WIDTH * k, (HEIGHT - FOOTER) * k)
        span_x, span_y = self.max_x - self.min_x, self.max_y - self.min_y
        self.scale = min(self.area[0] / span_y, self.area[1] / span_x)
        self.offset = ((self.area[0] - span_y * self.scale) / 2, (self.area[1] - span_x * self.scale) / 2)
        self.fonts = {n: _font(n * k) for n in (13, 15, 17)}
        self.footer_fonts = {n: _font(n) for n in (15, 18)}

    def px(self, point: Sequence[float]) -> tuple[float, float]:
        return (
            self.offset[0] + (self.max_y - point[1]) * self.scale,
            self.offset[1] + (self.max_x - point[0]) * self.scale,
        )

    def frame(self, state: dict | None, caption: Caption) -> Image.Image:
        """One RGB frame: the world ``state`` from above and the footer ``caption``."""
        canvas = Image.new("RGB", self.area, BACKGROUND)
        if state:
            draw = ImageDraw.Draw(canvas, "RGBA")
            self._draw_world(draw, state)
        picture = canvas.resize((WIDTH, HEIGHT - FOOTER), Image.Resampling.LANCZOS)
        out = Image.new("RGB", (WIDTH, HEIGHT), (31, 38, 51))
        out.paste(picture, (0, 0))
        self._draw_footer(ImageDraw.Draw(out), caption)
        return out

    def draw_footer(self, draw: ImageDraw.ImageDraw, caption: Caption) -> None:
        """Draw the footer ``caption`` at the bottom of a :data:`WIDTH` x :data:`HEIGHT` frame."""
        self._draw_footer(draw, caption)

    def _polygon(self, pose: Sequence[float], half: Sequence[float]) -> list[tuple[float, float]]:
        return [self.px(c) for c in corners(pose, half)]

    def _draw_world(self, draw: ImageDraw.ImageDraw, state: dict) -> None:
        k = SUPERSAMPLE
        actors = state.get("actors", {})
        for name, pose in actors.items():
            shape = self.shapes.get(name)
            if shape and shape.get("kind") == "table":
                draw.polygon(self._polygon(pose, shape["half_size"]), fill=TABLE, outline=(205, 191, 159))
        for name, pose in actors.items():
            shape = self.shapes.get(name)
            if not shape or shape.get("kind") != "zone":
                continue
            color = _rgb(shape.get("color"), (140, 233, 154))
            points = self._polygon(pose, shape["half_size"])
            draw.polygon(points, fill=(*color, 80), outline=(*color, 255), width=3 * k)
            x, y = max(p[0] for p in points), max(p[1] for p in points)
            draw.text((x + 4 * k, y - 20 * k), name, fill=(52, 58, 64), font=self.fonts[15])
        objects = sorted(
            ((n, p) for n, p in actors.items()
             if (self.shapes.get(n) or {}).get("kind", "object") == "object" and not _is_table(n, self.shapes.get(n))),
            key=lambda item: item[1][2],
        )
        for name, pose in objects:
            half = (self.shapes.get(name) or {}).get("half_size", [0.02, 0.02, 0.02])
            lifted = pose[2] > half[2] + LIFTED
            if lifted:
                shadow = [pose[0] - 0.012, pose[1] - 0.012, *pose[2:]]
                draw.polygon(self._polygon(shadow, half), fill=(0, 0, 0, 50))
            color = _rgb((self.shapes.get(name) or {}).get("color"), (134, 142, 150))
            outline = (33, 37, 41) if lifted else (73, 80, 87)
            draw.polygon(self._polygon(pose, half), fill=color, outline=outline, width=(3 if lifted else 1) * k)
        for i, (robot, parts) in enumerate(state.get("robots", {}).items()):
            self._draw_arm(draw, robot, parts, ARM_COLORS[i % len(ARM_COLORS)])

    def _draw_arm(self, draw: ImageDraw.ImageDraw, robot: str, parts: dict, color: tuple) -> None:
        k = SUPERSAMPLE
        points = [self.px(p) for p in parts.get("links", [])]
        if not points:
            return
        draw.line(points, fill=(*color, 90), width=14 * k, joint="curve")
        draw.line(points, fill=(*color, 230), width=3 * k, joint="curve")
        for x, y in points:
            draw.ellipse((x - 3.5 * k, y - 3.5 * k, x + 3.5 * k, y + 3.5 * k), fill=color)
        bx, by = points[0]
        draw.ellipse((bx - 16 * k, by - 16 * k, bx + 16 * k, by + 16 * k), fill=color)
        draw.text((bx, by + 26 * k), robot, fill=color, font=self.fonts[15], anchor="mt")
        fingers = [self.px(p) for p in parts.get("fingers", [])]
        if len(fingers) == 2:
            draw.line(fingers, fill=color, width=5 * k)
        if parts.get("tcp"):
            x, y = self.px(parts["tcp"])
            draw.ellipse((x - 5 * k, y - 5 * k, x + 5 * k, y + 5 * k), fill="white", outline=color, width=3 * k)

    def _draw_footer(self, draw: ImageDraw.ImageDraw, caption: Caption) -> None:
        if caption.total:  # the episode's progress, one tick per decision
            left, right, y = 16, WIDTH - 16, HEIGHT - 14
            draw.rounded_rectangle((left, y - 3, right, y + 3), radius=3, fill=(60, 70, 88))
            done = left + (right - left) * caption.position / caption.total
            draw.rounded_rectangle((left, y - 3, max(done, left + 6), y + 3), radius=3, fill=(92, 124, 250))
            for k in range(1, caption.total):
                x = left + (right - left) * k / caption.total
                draw.line((x, y - 3, x, y + 3), fill=(31, 38, 51), width=2)
        top = HEIGHT - FOOTER + 12
        draw.text((16, top), caption.title, fill=(255, 255, 255), font=self.footer_fonts[18])
        lines = [("instruction", caption.instruction), ("action", caption.action)]
        y = top + 32
        for label, text in lines:
            draw.text((16, y), label, fill=(150, 160, 180), font=self.footer_fonts[15])
            for line in _wrap(text, 100)[:3 if label == "instruction" else 2]:
                draw.text((120, y), line, fill=(230, 234, 240), font=self.footer_fonts[15])
                y += 20
            y += 6


def _rgb(color: Sequence[float] | None, fallback: tuple[int, int, int]) -> tuple[int, int, int]:
    if not color:
        return fallback
    r, g, b = (int(round(max(0.0, min(1.0, float(c))) * 255)) for c in color[:3])
    return r, g, b


def _wrap(text: str, width: int) -> list[str]:
    """``text`` on lines of at most ``width`` characters (one paragraph; long words cut)."""
    words = " ".join(str(text).split()).split(" ")
    lines, line = [], ""
    for word in words:
        while len(word) > width:
            word, rest = word[:width], word[width:]
            lines.append(word)
            word = rest
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    if line:
        lines.append(line)
    return lines or [""]


def blend(a: dict | None, b: dict | None, t: float) -> dict | None:
    """A state between ``a`` and ``b``: positions (and joint positions) interpolated,
    everything else from ``b``."""
    if not a or not b:
        return b
    out = dict(b)
    actors = {}
    for name, pose in b.get("actors", {}).items():
        start = a.get("actors", {}).get(name)
        if start is None:
            actors[name] = pose
        else:
            actors[name] = [start[j] + (pose[j] - start[j]) * t for j in range(3)] + list(
                (start if t < 1 else pose)[3:]
            )
    out["actors"] = actors

    def mix(p: JSONValue, q: JSONValue) -> JSONValue:
        if p and q and len(p) == len(q) and not isinstance(q[0], list):
            return [u + (v - u) * t for u, v in zip(p, q, strict=True)]
        if p and q and len(p) == len(q):
            return [mix(u, v) for u, v in zip(p, q, strict=True)]
        return q

    robots = {}
    for name, parts in b.get("robots", {}).items():
        start = a.get("robots", {}).get(name, {})
        robots[name] = {key: mix(start.get(key), value) for key, value in parts.items()}
    out["robots"] = robots
    articulations = {}
    for name, parts in b.get("articulations", {}).items():
        start = a.get("articulations", {}).get(name, {})
        articulations[name] = {key: mix(start.get(key), value) for key, value in parts.items()}
    if articulations:
        out["articulations"] = articulations
    return out
