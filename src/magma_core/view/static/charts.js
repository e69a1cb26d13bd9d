// Small SVG charts for the benchmark page: rates as bars with their 95% Wilson interval, and
// pass^k curves. Every mark carries its numbers in data-* attributes and a <title> tooltip.

import { s, h } from "./dom.js";

export const COLOURS = ["#3b5bdb", "#e8590c", "#2b8a3e", "#ae3ec9", "#1098ad", "#f59f00"];

export function pct(rate) {
  if (!rate || rate.rate === null || rate.rate === undefined) return "–";
  return `${(100 * rate.rate).toFixed(1)}%`;
}

export function rateText(rate) {
  if (!rate || rate.rate === null || rate.rate === undefined) return "no trial";
  return `${pct(rate)} (${rate.num}/${rate.den}; 95% CI ${(100 * rate.low).toFixed(0)}–${(100 * rate.high).toFixed(0)}%)`;
}

function axis(svg, left, top, width, height) {
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    const y = top + height - tick * height;
    svg.append(s("line", { x1: left, x2: left + width, y1: y, y2: y, class: "gridline" }),
      s("text", { x: left - 6, y: y + 4, class: "tick", "text-anchor": "end" }, `${tick * 100}%`));
  }
}

/** Grouped bars: ``series`` = [{name, rates: {group: rate}}]; ``onPick(group)`` on click. */
export function barChart({ title, series, groups, testid, onPick, selected, marks }) {
  groups = groups || [...new Set(series.flatMap((x) => Object.keys(x.rates)))];
  const left = 44, top = 16, height = 170, slot = Math.max(64, Math.min(120, 560 / Math.max(1, groups.length)));
  const width = slot * Math.max(1, groups.length);
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${left + width + 10} ${top + height + 26}`, "data-testid": testid, role: "img" },
    s("title", {}, title));
  axis(svg, left, top, width, height);
  const bar = (slot * 0.72) / Math.max(1, series.length);
  groups.forEach((group, gi) => {
    const x0 = left + gi * slot + slot * 0.14;
    const g = s("g", { class: `group ${selected === group ? "selected" : ""}`, "data-group": group });
    if (onPick) { g.style.cursor = "pointer"; g.addEventListener("click", () => onPick(group)); }
    g.appendChild(s("rect", { x: left + gi * slot, y: top, width: slot, height, class: "hit" }));
    series.forEach((sr, si) => {
      const r = sr.rates[group];
      if (r && r.den === 0 && series.length === 1) {
        g.appendChild(s("text", { x: left + gi * slot + slot / 2, y: top + height - 6, class: "label", "text-anchor": "middle" }, "no paired trial"));
      }
      if (!r || r.rate === null || r.rate === undefined) return;
      const x = x0 + si * bar, y = top + height - r.rate * height;
      const mark = marks && marks[sr.name] && marks[sr.name].includes(group);
      g.append(
        s("rect", { x, y, width: Math.max(2, bar - 3), height: Math.max(0.5, r.rate * height), fill: COLOURS[si % COLOURS.length],
          class: "bar", "data-run": sr.name, "data-num": r.num, "data-den": r.den, "data-rate": r.rate.toFixed(4) },
        s("title", {}, `${sr.name} · ${group}: ${rateText(r)}`)),
        s("line", { x1: x + (bar - 3) / 2, x2: x + (bar - 3) / 2, y1: top + height - r.high * height, y2: top + height - r.low * height, class: "whisker" }),
        s("line", { x1: x + (bar - 3) / 2 - 4, x2: x + (bar - 3) / 2 + 4, y1: top + height - r.high * height, y2: top + height - r.high * height, class: "whisker" }),
        s("line", { x1: x + (bar - 3) / 2 - 4, x2: x + (bar - 3) / 2 + 4, y1: top + height - r.low * height, y2: top + height - r.low * height, class: "whisker" }));
      if (series.length === 1) {
        const inside = r.rate > 0.12;
        g.appendChild(s("text", { x: x + (bar - 3) / 2 + 8, y: inside ? top + height - 6 : y - 4, class: `value ${inside ? "inside" : ""}`,
          "text-anchor": "start" }, `${r.num}/${r.den}`));
      }
      if (mark) g.appendChild(s("text", { x: x + (bar - 3) / 2, y: top + height - r.high * height - 3, class: "sigmark", "text-anchor": "middle" }, "*"));
    });
    g.appendChild(s("text", { x: left + gi * slot + slot / 2, y: top + height + 16, class: "label", "text-anchor": "middle" }, group.replaceAll("_", " ")));
    svg.appendChild(g);
  });
  if (series.length > 1) svg.legendNames = series.map((x) => x.name);
  return svg;
}

/** pass^k curves: ``series`` = [{name, values: {k: value}}]. */
export function lineChart({ title, series, testid }) {
  const ks = [...new Set(series.flatMap((x) => Object.keys(x.values).map(Number)))].sort((a, b) => a - b);
  const left = 44, top = 12, height = 170, width = Math.max(240, 90 * ks.length);
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${left + width + 20} ${top + height + 26}`, "data-testid": testid, role: "img" },
    s("title", {}, title));
  axis(svg, left, top, width, height);
  const xOf = (k) => left + 20 + (ks.length > 1 ? ((k - ks[0]) / (ks[ks.length - 1] - ks[0])) * (width - 40) : (width - 40) / 2);
  for (const k of ks) svg.appendChild(s("text", { x: xOf(k), y: top + height + 16, class: "label", "text-anchor": "middle" }, `k=${k}`));
  series.forEach((sr, si) => {
    const colour = COLOURS[si % COLOURS.length];
    const points = ks.filter((k) => sr.values[k] !== null && sr.values[k] !== undefined).map((k) => [k, xOf(k), top + height - sr.values[k] * height]);
    const g = s("g", { class: "curve", "data-series": sr.name });
    g.appendChild(s("polyline", { points: points.map(([, x, y]) => `${x},${y}`).join(" "), fill: "none", stroke: colour, "stroke-width": 2 }));
    for (const [k, x, y] of points) {
      g.appendChild(s("circle", { cx: x, cy: y, r: 4, fill: colour, "data-k": k, "data-value": sr.values[k].toFixed(4) },
        s("title", {}, `${sr.name}: pass^${k} = ${(100 * sr.values[k]).toFixed(1)}%`)));
    }
    svg.appendChild(g);
  });
  svg.legendNames = series.map((x) => x.name);
  return svg;
}

export function chartPanel(title, chart, note) {
  const names = chart.legendNames || [];
  return h("figure", { class: "panel chart-panel" }, h("figcaption", {}, title), chart,
    names.length ? h("div", { class: "legend" }, names.map((name, i) => h("span", {},
      h("span", { class: "sw", style: `background:${COLOURS[i % COLOURS.length]}` }), name.replaceAll("_", " ")))) : null,
    note ? h("div", { class: "muted note" }, note) : null);
}
