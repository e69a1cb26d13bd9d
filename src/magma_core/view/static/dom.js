// Small DOM and formatting helpers. Every string from the store goes in as text, never HTML:
// agent output is untrusted.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

const SVG_NS = "http://www.w3.org/2000/svg";

export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    el.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null) continue;
    el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export async function getJSON(url) {
  const response = await fetch(url, { cache: "no-store" });
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = (await response.json()).detail || detail; } catch (e) { /* not JSON */ }
    const error = new Error(detail);
    error.status = response.status;
    throw error;
  }
  return response.json();
}

export function fmtTime(epochSeconds) {
  if (!epochSeconds) return "";
  const d = new Date(epochSeconds * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function fmtAgo(epochSeconds) {
  if (!epochSeconds) return "";
  const s = Math.max(0, Date.now() / 1000 - epochSeconds);
  if (s < 60) return `${Math.round(s)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

export function fmtSeconds(value) {
  if (value === undefined || value === null) return "";
  if (value < 1) return `${Math.round(value * 1000)} ms`;
  if (value < 120) return `${value.toFixed(1)} s`;
  return `${Math.floor(value / 60)} min ${Math.round(value % 60)} s`;
}

export function fmtInt(value) {
  return value === undefined || value === null ? "" : Number(value).toLocaleString("en-US");
}

export function pill(text, cls) {
  return h("span", { class: `pill ${cls ?? text}` }, text);
}

export function callSignature(call) {
  // robot.tool(key="value", n=2) in the style of the tool tester
  const args = call.arguments && typeof call.arguments === "object"
    ? Object.entries(call.arguments).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ")
    : String(call.arguments ?? "");
  const robot = call.robot || call.target_robot_name;
  return { robot: robot ? `${robot}.` : "", fn: call.tool || call.name || "?", args };
}

export function setCrumbs(items) {
  const nodes = [];
  items.forEach(([label, href], i) => {
    if (i) nodes.push(h("span", { class: "sep" }, "/"));
    nodes.push(href ? h("a", { href }, label) : h("span", {}, label));
  });
  document.getElementById("crumbs").replaceChildren(...nodes);
}

export function statusBar(statuses, total) {
  const bar = h("span", { class: "statusbar", title: Object.entries(statuses).map(([k, v]) => `${k}: ${v}`).join(", ") });
  if (!total) return bar;
  const order = ["success", "failed", "exceeded", "error"];
  const rest = Object.entries(statuses).filter(([k]) => !order.includes(k)).reduce((a, [, v]) => a + v, 0);
  for (const key of order) {
    if (statuses[key]) bar.appendChild(h("span", { class: key, style: `width:${(100 * statuses[key]) / total}%` }));
  }
  if (rest) bar.appendChild(h("span", { class: "other", style: `width:${(100 * rest) / total}%` }));
  return bar;
}


// The crumbs leading to a run: through its benchmark run when it holds a benchmark's trials.
export function runCrumbs(run, name, href) {
  const bench = run && run.benchmark;
  if (!bench) return [["all items", "#/"], [name, href]];
  return [["all items", "#/"], ["benchmarks", "#/kind/bench"],
    [bench.bench, `#/benchmarks/${encodeURIComponent(bench.bench)}`], ["trials", href]];
}

// "item ID · trial k" for episode ``episode`` of a benchmark's run, else "episode N".
export function episodeName(run, episode) {
  const bench = run && run.benchmark;
  const item = bench ? bench.items[Math.floor(episode / bench.trials)] : undefined;
  return item === undefined ? `episode ${episode}` : `item ${item} · trial ${episode % bench.trials}`;
}
