// The top-down replay: the table seen from above, drawn in SVG from recorded world states.
// World x points away from the robot (up on screen), world y to its left (left on screen).

import { s } from "./dom.js";

const LIFTED = 0.012;  // an object this far above its resting height is drawn as lifted
const ARM_COLORS = ["#343a40", "#5f3dc4", "#0b7285", "#862e9c"];

export function yawOf(q) {
  const [w, x, y, z] = q;
  return Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
}

function rgb(color, fallback) {
  if (!color) return fallback;
  const [r, g, b] = color.map((c) => Math.round(Math.max(0, Math.min(1, c)) * 255));
  return `rgb(${r},${g},${b})`;
}

function corners(pose, half) {
  const [x, y] = pose;
  const yaw = yawOf(pose.slice(3, 7));
  const c = Math.cos(yaw), sn = Math.sin(yaw);
  return [[-1, -1], [1, -1], [1, 1], [-1, 1]].map(([a, b]) => {
    const dx = a * half[0], dy = b * half[1];
    return [x + c * dx - sn * dy, y + sn * dx + c * dy];
  });
}

/** Bounds (world xy) that hold every object, zone and robot link over all states. */
export function sceneBounds(scene, states) {
  let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
  const add = (x, y) => { minX = Math.min(minX, x); maxX = Math.max(maxX, x); minY = Math.min(minY, y); maxY = Math.max(maxY, y); };
  const shapes = (scene && scene.actors) || {};
  for (const state of states) {
    if (!state) continue;
    for (const [name, pose] of Object.entries(state.actors || {})) {
      const shape = shapes[name];
      if (shape && shape.kind === "table") continue;
      if (!shape && /table|ground/.test(name)) continue;
      const half = shape ? shape.half_size : [0.02, 0.02];
      for (const [x, y] of corners(pose, half)) add(x, y);
    }
    for (const robot of Object.values(state.robots || {})) for (const [x, y] of robot.links || []) add(x, y);
  }
  if (!isFinite(minX)) { minX = -0.5; maxX = 0.5; minY = -0.5; maxY = 0.5; }
  const pad = 0.07;
  return { minX: minX - pad, maxX: maxX + pad, minY: minY - pad, maxY: maxY + pad };
}

export class Replay {
  /** Draws ``states`` of ``scene`` into ``container`` (an element); ``show(i)`` picks one. */
  constructor(container, scene, states) {
    this.scene = scene || { actors: {} };
    this.states = states;
    this.bounds = sceneBounds(this.scene, states);
    this.scale = 600;  // px per metre in SVG units
    const b = this.bounds;
    this.width = (b.maxY - b.minY) * this.scale;
    this.height = (b.maxX - b.minX) * this.scale;
    this.svg = s("svg", {
      viewBox: `0 0 ${this.width.toFixed(1)} ${this.height.toFixed(1)}`,
      role: "img", "aria-label": "top-down replay", "data-testid": "replay-svg",
    });
    container.replaceChildren(this.svg);
    this.index = -1;
    this.frame = null;
  }

  px([x, y]) {
    return [(this.bounds.maxY - y) * this.scale, (this.bounds.maxX - x) * this.scale];
  }

  show(index, animate = true) {
    index = Math.max(0, Math.min(this.states.length - 1, index));
    const from = this.index >= 0 ? this.states[this.index] : null;
    const to = this.states[index];
    const previous = this.index;
    this.index = index;
    this.svg.dataset.position = String(index);
    if (this.frame) cancelAnimationFrame(this.frame);
    if (!animate || !from || !to || Math.abs(previous - index) !== 1) {
      this.draw(to, from && previous === index - 1 ? from : null);
      return;
    }
    const start = performance.now(), duration = 350;
    const tick = (now) => {
      const t = Math.min(1, (now - start) / duration);
      const e = t < 0.5 ? 2 * t * t : 1 - Math.pow(-2 * t + 2, 2) / 2;
      this.draw(blend(from, to, e), index > previous ? from : null);
      if (t < 1) this.frame = requestAnimationFrame(tick);
    };
    this.frame = requestAnimationFrame(tick);
  }

  draw(state, previous) {
    const g = [];
    const shapes = this.scene.actors || {};
    g.push(s("rect", { x: 0, y: 0, width: this.width, height: this.height, fill: "#d9dde3" }));
    if (!state) { this.svg.replaceChildren(...g); return; }
    const actors = Object.entries(state.actors || {});
    for (const [name, pose] of actors) {  // the table first
      const shape = shapes[name];
      if (shape && shape.kind === "table") g.push(this.box(pose, shape.half_size, "#eadfcb", "#cdbf9f", name, "table"));
    }
    for (const [name, pose] of actors) {  // zones on the table
      const shape = shapes[name];
      if (!shape || shape.kind !== "zone") continue;
      const fill = rgb(shape.color, "#8ce99a");
      const el = this.box(pose, shape.half_size, fill, fill, name, "zone");
      el.setAttribute("fill-opacity", "0.28");
      el.setAttribute("stroke-width", "3");
      el.setAttribute("stroke-dasharray", "8 5");
      g.push(el);
      const [cx, cy] = this.px(corners(pose, shape.half_size)[2]);
      g.push(s("text", { x: cx + 4, y: cy + 16, class: "zone-label", "font-size": 13,
        fill: "#343a40", "font-weight": 600 }, name));
    }
    const objects = actors.filter(([name]) => {
      const shape = shapes[name];
      return shape ? shape.kind === "object" : !/table|ground/.test(name);
    }).sort((a, b) => a[1][2] - b[1][2]);
    for (const [name, pose] of objects) {  // trails: where an object was before this decision
      const before = previous && previous.actors && previous.actors[name];
      if (!before) continue;
      const [x0, y0] = this.px(before), [x1, y1] = this.px(pose);
      if (Math.hypot(x1 - x0, y1 - y0) < 4) continue;
      g.push(s("line", { x1: x0, y1: y0, x2: x1, y2: y1, stroke: "#495057", "stroke-width": 2,
        "stroke-dasharray": "5 5", "marker-end": "none", opacity: 0.6 }));
      g.push(s("circle", { cx: x0, cy: y0, r: 4, fill: "none", stroke: "#495057", opacity: 0.6 }));
    }
    for (const [name, pose] of objects) {
      const shape = shapes[name];
      const half = shape ? shape.half_size : [0.02, 0.02, 0.02];
      const lifted = pose[2] > (half[2] || 0.02) + LIFTED;
      if (lifted) {
        const shadow = this.box([pose[0] - 0.012, pose[1] - 0.012, ...pose.slice(2)], half, "#000", "none", "", "shadow");
        shadow.setAttribute("opacity", "0.18");
        g.push(shadow);
      }
      const fill = rgb(shape && shape.color, "#868e96");
      const el = this.box(pose, half, fill, lifted ? "#212529" : "#495057", name, "object");
      el.setAttribute("stroke-width", lifted ? "3" : "1.5");
      el.dataset.name = name;
      el.dataset.lifted = lifted ? "1" : "0";
      el.dataset.x = pose[0].toFixed(4);
      el.dataset.y = pose[1].toFixed(4);
      el.appendChild(s("title", {}, `${name}  x=${pose[0].toFixed(3)} y=${pose[1].toFixed(3)} z=${pose[2].toFixed(3)}`));
      g.push(el);
    }
    Object.entries(state.robots || {}).forEach(([robot, links], i) => g.push(this.arm(robot, links, i)));
    this.svg.replaceChildren(...g);
  }

  box(pose, half, fill, stroke, name, kind) {
    const points = corners(pose, half).map((p) => this.px(p).map((v) => v.toFixed(1)).join(",")).join(" ");
    return s("polygon", { points, fill, stroke, "stroke-width": 1.5, "data-kind": kind, "data-name": name || null });
  }

  arm(robot, parts, i) {
    const color = ARM_COLORS[i % ARM_COLORS.length];
    const g = s("g", { "data-robot": robot, opacity: 0.85 });
    const links = parts.links || [];
    if (!links.length) return g;
    const pts = links.map((p) => this.px(p));
    const line = pts.map((p) => p.map((v) => v.toFixed(1)).join(",")).join(" ");
    g.appendChild(s("polyline", { points: line, fill: "none", stroke: color, "stroke-width": 14,
      "stroke-linecap": "round", "stroke-linejoin": "round", opacity: 0.35 }));
    g.appendChild(s("polyline", { points: line, fill: "none", stroke: color, "stroke-width": 3, "stroke-linejoin": "round" }));
    for (const p of pts) g.appendChild(s("circle", { cx: p[0], cy: p[1], r: 3.5, fill: color }));
    const [bx, by] = pts[0];
    g.appendChild(s("circle", { cx: bx, cy: by, r: 16, fill: color }));
    g.appendChild(s("text", { x: bx, y: by + 34, "text-anchor": "middle", "font-size": 14, fill: color,
      "font-weight": 700 }, robot));
    const fingers = (parts.fingers || []).map((p) => this.px(p));
    if (fingers.length === 2) {
      g.appendChild(s("line", { x1: fingers[0][0], y1: fingers[0][1], x2: fingers[1][0], y2: fingers[1][1],
        stroke: color, "stroke-width": 5, "stroke-linecap": "round" }));
    }
    if (parts.tcp) {
      const [tx, ty] = this.px(parts.tcp);
      g.appendChild(s("circle", { cx: tx, cy: ty, r: 5, fill: "#fff", stroke: color, "stroke-width": 2.5,
        "data-testid": `tcp-${robot}` }));
    }
    return g;
  }
}

function lerp(a, b, t) { return a + (b - a) * t; }

function blend(a, b, t) {
  // Positions move linearly; orientations and everything else switch at the end.
  const out = { ...b, actors: {}, robots: {} };
  for (const [name, pose] of Object.entries(b.actors || {})) {
    const from = a.actors && a.actors[name];
    out.actors[name] = from ? [lerp(from[0], pose[0], t), lerp(from[1], pose[1], t), lerp(from[2], pose[2], t), ...(t < 1 ? from : pose).slice(3)] : pose;
  }
  const mix = (p, q) => (p && q && p.length === q.length ? q.map((v, j) => lerp(p[j], v, t)) : q);
  const mixAll = (ps, qs) => (ps && qs && ps.length === qs.length ? qs.map((q, k) => mix(ps[k], q)) : qs);
  for (const [name, robot] of Object.entries(b.robots || {})) {
    const from = (a.robots && a.robots[name]) || {};
    out.robots[name] = { links: mixAll(from.links, robot.links), fingers: mixAll(from.fingers, robot.fingers),
      tcp: mix(from.tcp, robot.tcp) };
  }
  return out;
}
