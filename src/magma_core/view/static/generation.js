// The generation page: the trees of situations (one agent input, small rings) and candidates
// (one decision each, discs) of a `magma gen`, coloured by status or by score, zoomable and
// pannable; a click shows the node in the episode page's detail panel.

import { h, s, getJSON, fmtTime, fmtInt, pill, setCrumbs } from "./dom.js";
import { turn, readable } from "./turns.js";

const STATUS_COLOURS = {
  success: "#2b8a3e", failed: "#e03131", invalid: "#f76707", exceeded: "#c92a2a", no_action: "#f59f00",
  decision_cap: "#f59f00", trace_exhausted: "#f59f00", error: "#e03131", optimal: "#12b886", suboptimal: "#a9e34b", unassessed: "#868e96",
  ongoing: "#4c6ef5",
};
const STATUS_NOTES = {
  success: "task done", failed: "stage failed", invalid: "invalid answer", exceeded: "budget exceeded",
  no_action: "no tool call 3×", decision_cap: "decision cap", trace_exhausted: "trace ran out", error: "stage error",
  optimal: "stage finished, optimal", suboptimal: "stage finished, acceptable", unassessed: "stage finished, unassessed",
  ongoing: "stage goes on",
};
const X_GAP = 58, Y_GAP = 50, TREE_GAP = 80;
const views = {};  // generation -> {mode, transform}: kept across live refreshes

/** What a candidate's colour says under "status": how its branch or its stage ended. */
export function outcomeOf(c) {
  return c.episode_status && c.episode_status !== "running" ? c.episode_status : c.end_status;
}

export async function renderGeneration(page, route) {
  const name = route.gen;
  const view = views[name] || (views[name] = { mode: "status", transform: null });
  const base = `#/generations/${encodeURIComponent(name)}`;
  setCrumbs([["all items", "#/"], ["generations", "#/kind/gen"], [name, null]]);
  const data = await getJSON(`/api/generations/${encodeURIComponent(name)}`);
  const layout = layoutTrees(data);
  const scored = data.candidates.filter((c) => c.score !== null);
  const best = scored.length ? Math.max(...scored.map((c) => c.score)) : null;

  const svg = s("svg", { class: "tree", "data-testid": "gen-tree" });
  const world = s("g", { class: "world" });
  svg.appendChild(world);
  const nodeEls = new Map();  // "situation:3" -> element
  for (const [a, b] of layout.edges) world.appendChild(s("path", { class: "edge", d: `M${a.x},${a.y} C${a.x},${(a.y + b.y) / 2} ${b.x},${(a.y + b.y) / 2} ${b.x},${b.y}` }));
  for (const t of layout.treeLabels) world.appendChild(s("text", { class: "tree-label", x: t.x, y: t.y }, t.text));
  for (const node of layout.nodes) {
    const key = `${node.kind}:${node.data.id}`;
    const el = node.kind === "situation" ? situationMark(node) : candidateMark(node, view.mode, best);
    const open = () => { location.hash = `${base}/${node.kind}/${node.data.id}`; };
    el.addEventListener("click", (e) => { e.stopPropagation(); open(); });
    el.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(); } });
    nodeEls.set(key, el);
    world.appendChild(el);
  }
  const zoom = panZoom(svg, world, layout.bounds, view);
  const hint = h("div", { class: "muted" }, "Click a situation or a candidate to see what the agent saw, what it decided, what that did and how it was verified.");
  const detail = h("div", { class: "panel pad gen-detail", "data-testid": "gen-detail" }, hint);

  const legendBox = h("div", {}, legend(view.mode, data.candidates));
  const modes = h("div", { class: "tabs", "data-testid": "colour-mode" }, h("span", { class: "muted tabs-label" }, "colour by"));
  const recolour = () => {
    for (const node of layout.nodes) {
      if (node.kind !== "candidate") continue;
      const fill = view.mode === "score" ? scoreColour(node.data.score, best) : STATUS_COLOURS[outcomeOf(node.data)] || "#adb5bd";
      const el = nodeEls.get(`candidate:${node.data.id}`);
      el.dataset.fill = fill;
      el.querySelector("circle").setAttribute("fill", fill);
    }
    legendBox.replaceChildren(legend(view.mode, data.candidates));
    modes.querySelectorAll("[data-mode]").forEach((b) => b.classList.toggle("active", b.dataset.mode === view.mode));
  };
  for (const [mode, label] of [["status", "status"], ["score", "score"]]) {
    modes.appendChild(h("button", { class: `tab ${view.mode === mode ? "active" : ""}`, "data-mode": mode,
      onclick: () => { view.mode = mode; recolour(); } }, label));
  }
  const c = data.counts;
  page.replaceChildren(
    h("div", { class: "episode-head" }, h("h1", {}, name), pill(data.state), h("span", { class: "mono muted" }, data.target),
      h("span", { class: "muted" }, `agent ${data.config.agent ?? "?"}`), h("span", { class: "muted" }, `started ${fmtTime(data.created_at)}`)),
    h("div", { class: "cards" },
      card("candidates", `${fmtInt(c.candidates)}${data.config.max_nodes ? ` / ${fmtInt(data.config.max_nodes)}` : ""}`, "gen-candidates"),
      card("situations", fmtInt(c.situations), "gen-situations"), card("successful branches", fmtInt(c.successes), "gen-successes"),
      card("trees", data.trees.length, "gen-trees"), card("best score", best === null ? "–" : best.toFixed(3), "gen-best"),
      card("kept by export", data.candidates.filter((x) => x.kept).length, "gen-kept"),
      card("B / K", `${data.config.branches ?? "?"} / ${data.config.max_per_stage ?? "?"}`)),
    h("div", { class: "toolbar" },
      modes,
      h("div", { class: "tabs" }, h("button", { class: "tab", title: "zoom in", "data-testid": "zoom-in", onclick: () => zoom.by(1.4) }, "+"),
        h("button", { class: "tab", title: "zoom out", "data-testid": "zoom-out", onclick: () => zoom.by(1 / 1.4) }, "−"),
        h("button", { class: "tab", title: "fit the trees in view", "data-testid": "zoom-fit", onclick: () => zoom.fit() }, "fit")),
      legendBox),
    h("div", { class: "gen-split" }, h("div", { class: "panel tree-panel" }, svg), detail),
    h("details", { class: "config" }, h("summary", {}, "configuration"), h("pre", {}, JSON.stringify(data.config, null, 2))));
  zoom.restore();

  let token = 0;
  const select = async (params) => {
    for (const el of nodeEls.values()) el.classList.remove("selected");
    if (params.nodekind !== "situation" && params.nodekind !== "candidate") {
      token++;
      detail.replaceChildren(hint);
      return;
    }
    const el = nodeEls.get(`${params.nodekind}:${params.node}`);
    if (el) el.classList.add("selected");
    const mine = ++token;
    try {
      const node = await getJSON(`/api/generations/${encodeURIComponent(name)}/${params.nodekind}/${params.node}`);
      if (mine === token) detail.replaceChildren(...nodeDetail(node, data, base));
    } catch (error) {
      if (mine === token) detail.replaceChildren(h("p", { "data-testid": "error" }, error.message));
    }
  };
  await select(route);
  return select;
}

function card(k, v, testid) {
  return h("div", { class: "card" }, h("div", { class: "k" }, k), h("div", { class: "v", "data-testid": testid }, v));
}

/** Positions: leaves side by side, each parent centred over its children, levels top-down
 * (situation, its candidates, their next situations, ...); trees side by side. */
export function layoutTrees(data) {
  const bySituation = new Map(), situations = new Map();
  for (const sit of data.situations) situations.set(sit.id, sit);
  for (const c of data.candidates) {
    if (!bySituation.has(c.situation)) bySituation.set(c.situation, []);
    bySituation.get(c.situation).push(c);
  }
  for (const list of bySituation.values()) list.sort((a, b) => a.candidate_index - b.candidate_index);
  const nodes = [], edges = [], treeLabels = [];
  let cursor = 0, maxY = 0;
  const place = (kind, item, level) => {  // iterative post-order: no recursion limit on deep trees
    const root = { kind, data: item, level, children: null, x: 0, y: 0 };
    const stack = [root];
    while (stack.length) {
      const node = stack[stack.length - 1];
      if (node.children === null) {
        const kids = node.kind === "situation"
          ? (bySituation.get(node.data.id) || []).map((c) => ({ kind: "candidate", data: c }))
          : (node.data.next_situation !== null && situations.has(node.data.next_situation)
            ? [{ kind: "situation", data: situations.get(node.data.next_situation) }] : []);
        node.children = kids.map((k) => ({ ...k, level: node.level + 1, children: null, x: 0, y: 0 }));
        for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
        continue;
      }
      stack.pop();
      node.y = node.level * Y_GAP;
      maxY = Math.max(maxY, node.y);
      if (node.children.length) {
        node.x = (node.children[0].x + node.children[node.children.length - 1].x) / 2;
        for (const child of node.children) edges.push([node, child]);
      } else {
        node.x = cursor;
        cursor += X_GAP;
      }
      nodes.push(node);
    }
    return root;
  };
  for (const tree of data.trees) {
    const start = cursor;
    const root = situations.get(tree.root);
    if (!root) continue;
    place("situation", root, 0);
    treeLabels.push({ x: start, y: -22, text: `tree ${tree.tree} · seed ${tree.seed}` });
    cursor += TREE_GAP;
  }
  const bounds = { minX: -X_GAP, maxX: Math.max(cursor - TREE_GAP, 0) + X_GAP, minY: -40, maxY: maxY + 40 };
  return { nodes, edges, treeLabels, bounds };
}

function situationMark(node) {
  const sit = node.data;
  return s("g", { class: `node situation ${sit.status}`, transform: `translate(${node.x},${node.y})`, "data-situation": sit.id,
    "data-status": sit.status, tabindex: 0 },
    s("circle", { r: 6 }),
    s("title", {}, `situation ${sit.id} · depth ${sit.depth} · stage ${sit.stage} · ${sit.status}${sit.end_status ? ` (${sit.end_status})` : ""}`));
}

function candidateMark(node, mode, best) {
  const c = node.data;
  const outcome = outcomeOf(c);
  const fill = mode === "score" ? scoreColour(c.score, best) : STATUS_COLOURS[outcome] || "#adb5bd";
  const role = c.coaching ? c.coaching.role : null;
  return s("g", { class: `node candidate ${c.kept ? "kept" : ""} ${c.score === null ? "unscored" : ""} ${role ? "coached" : ""}`,
    transform: `translate(${node.x},${node.y})`, "data-candidate": c.id, "data-outcome": outcome,
    "data-score": c.score === null ? "" : c.score.toFixed(4), "data-fill": fill, "data-coached": role || "", tabindex: 0 },
    s("circle", { r: 9, fill }),
    role ? s("text", { class: "coach-badge", x: 9, y: -7, "data-testid": "coach-badge" }, role === "recovery" ? "R" : "C") : null,
    s("text", { class: "node-label", y: 20, "text-anchor": "middle" }, c.label.length > 14 ? `${c.label.slice(0, 13)}…` : c.label),
    s("title", {}, `candidate ${c.id}: ${c.label}\n${outcome}${c.score === null ? "" : ` · score ${c.score.toFixed(3)}`}${c.kept ? " · kept by export" : ""}`));
}

export function scoreColour(score, best) {
  if (score === null || score === undefined) return "#dee2e6";
  const t = best > 0 ? Math.max(0, Math.min(1, score / best)) : 0;
  const from = [255, 244, 230], to = [43, 138, 62];
  const c = from.map((f, i) => Math.round(f + (to[i] - f) * t));
  return `rgb(${c.join(",")})`;
}

function legend(mode, candidates) {
  if (mode === "score") {
    return h("div", { class: "legend gen-legend", "data-testid": "gen-legend" },
      h("span", {}, h("span", { class: "sw", style: `background:${scoreColour(0, 1)}` }), "score 0"),
      h("span", {}, h("span", { class: "sw", style: `background:${scoreColour(1, 1)}` }), "best score"),
      h("span", {}, h("span", { class: "sw", style: "background:#dee2e6" }), "not scored yet"),
      h("span", {}, h("span", { class: "sw ring" }), "kept by the export's selection"));
  }
  const present = [...new Set(candidates.map(outcomeOf))];
  return h("div", { class: "legend gen-legend", "data-testid": "gen-legend" },
    present.map((k) => h("span", { "data-outcome": k }, h("span", { class: "sw", style: `background:${STATUS_COLOURS[k] || "#adb5bd"}` }), `${k} — ${STATUS_NOTES[k] || ""}`)),
    h("span", {}, h("span", { class: "sw hollow" }), "situation"));
}

function panZoom(svg, world, bounds, view) {
  let t = view.transform || null;
  const apply = () => { world.setAttribute("transform", `translate(${t.x},${t.y}) scale(${t.k})`); svg.classList.toggle("far", t.k < 0.7); view.transform = t; svg.dataset.scale = t.k.toFixed(3); };
  const size = () => { const r = svg.getBoundingClientRect(); return [r.width || 800, r.height || 560]; };
  const fit = () => {
    const [w, hgt] = size();
    const k = Math.min(2, Math.max(0.05, Math.min(w / (bounds.maxX - bounds.minX), hgt / (bounds.maxY - bounds.minY))));
    t = { k, x: (w - (bounds.maxX + bounds.minX) * k) / 2, y: 20 - bounds.minY * k };
    apply();
  };
  const zoomAt = (factor, cx, cy) => {
    const k = Math.min(8, Math.max(0.03, t.k * factor));
    t = { k, x: cx - ((cx - t.x) * k) / t.k, y: cy - ((cy - t.y) * k) / t.k };
    apply();
  };
  svg.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = svg.getBoundingClientRect();
    zoomAt(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
  }, { passive: false });
  let drag = null;
  svg.addEventListener("pointerdown", (e) => { if (e.target.closest(".node")) return; drag = { x: e.clientX, y: e.clientY, t }; svg.setPointerCapture(e.pointerId); svg.classList.add("dragging"); });
  svg.addEventListener("pointermove", (e) => { if (!drag) return; t = { k: drag.t.k, x: drag.t.x + e.clientX - drag.x, y: drag.t.y + e.clientY - drag.y }; apply(); });
  const end = () => { drag = null; svg.classList.remove("dragging"); };
  svg.addEventListener("pointerup", end);
  svg.addEventListener("pointercancel", end);
  return {
    fit,
    by: (factor) => { const [w, hgt] = size(); zoomAt(factor, w / 2, hgt / 2); },
    restore: () => { if (t) apply(); else fit(); },
  };
}

function nodeDetail(node, data, base) {
  const sit = node.situation, cand = node.candidate;
  const input = sit.agent_input || {};
  const instruction = input.instruction || {};
  const seen = h("details", { class: "config" }, h("summary", {}, "the whole input (tools, memory, …)"),
    h("pre", { "data-testid": "agent-input" }, JSON.stringify(input, null, 2)));
  const sitLink = h("a", { href: `${base}/situation/${sit.id}` }, `situation ${sit.id}`);
  if (!cand) {
    const kids = data.candidates.filter((c) => c.situation === sit.id);
    return [
      h("h2", { "data-testid": "detail-title" }, `Situation ${sit.id}`),
      h("div", { class: "facts" }, pill(sit.status), h("span", {}, `tree ${sit.tree} · depth ${sit.depth} · stage ${sit.stage} · ${sit.idle} idle`),
        sit.end_status ? pill(sit.end_status) : null),
      h("div", { class: "msg " + (instruction.type === "env" ? "env" : "user") },
        h("div", { class: "who" }, instruction.type === "env" ? "engine feedback → agent" : "user"),
        h("div", { class: "text", "data-testid": "situation-input" }, readable(instruction.content))),
      seen,
      h("h2", {}, `Candidates (${kids.length})`),
      h("ul", { class: "kids" }, kids.map((c) => h("li", {}, h("a", { href: `${base}/candidate/${c.id}` }, `candidate ${c.id}`),
        " ", pill(outcomeOf(c), outcomeOf(c)), " ", h("span", { class: "mono" }, c.label),
        c.score === null ? null : h("span", { class: "muted" }, ` score ${c.score.toFixed(3)}`)))),
    ];
  }
  const ex = cand.execution || {};
  const step = {
    step_index: ex.step_index ?? sit.depth, stage_index: cand.stage,
    inputs: [{ kind: instruction.type === "env" ? "env" : "user", content: instruction.content }],
    decision: cand.output || {}, calls: ex.calls || [],
    stage_success: ex.stage_success ?? (cand.status === "invalid" ? "FAIL" : null), stage_state: ex.stage_state,
    verification: ex.verification ?? null, status: cand.episode_status, tool_calls: ex.tool_calls ?? 0,
    failure_reason: ex.failure_reason, message: ex.message,
  };
  const view = turn(step, sit.depth, { stages: [] }, cand.agent);
  view.querySelector(".step").textContent = `Candidate ${cand.id} (decision ${cand.candidate_index + 1} of ${sitLink.textContent})`;
  const child = cand.next_situation;
  return [
    h("h2", { "data-testid": "detail-title" }, `Candidate ${cand.id}`),
    h("div", { class: "facts" }, pill(outcomeOf(cand), outcomeOf(cand)), h("span", {}, "from ", sitLink, ` · tree ${cand.tree} · stage ${cand.stage}`),
      h("span", { "data-testid": "detail-score" }, cand.score === null ? "not scored yet" : `score ${cand.score.toFixed(3)}`),
      data.candidates.some((c) => c.id === cand.id && c.kept) ? pill("kept by export", "ok") : null,
      child !== null ? h("a", { href: `${base}/situation/${child}` }, `→ situation ${child}`) : h("span", { class: "muted" }, "branch ends here")),
    view,
    cand.results ? h("details", { class: "config" }, h("summary", {}, "score: stage ends below this candidate"),
      h("pre", {}, JSON.stringify(cand.results, null, 2))) : null,
    coachingPanel(cand.coaching),
    h("details", { class: "config" }, h("summary", {}, "agent memory and internal steps"),
      h("pre", {}, JSON.stringify({ memory: cand.memory, internal_steps: cand.internal_steps }, null, 2))),
    seen,
  ];
}

/** A candidate's coaching: what made it (a coach's repair) and what its branch's end asked. */
function coachingPanel(coaching) {
  if (!coaching || (!coaching.record && !coaching.rows.length)) return null;
  const rec = coaching.record;
  return h("section", { class: "coaching", "data-testid": "coaching" },
    h("h2", {}, "Coaching"),
    rec ? h("div", { class: "facts" }, pill(rec.role === "recovery" ? "recovery candidate" : "coached candidate", "ok"),
      h("span", {}, `${rec.type} · by ${rec.source} · attempt ${rec.attempt} · ${rec.point}`)) : null,
    ...coaching.rows.map((row) => h("div", { class: "coaching-row", "data-testid": "coaching-row" },
      h("div", { class: "facts" }, h("strong", {}, row.made_this ? "the request that made it" : "asked at this branch's end"),
        pill(row.status, row.status === "corrected" ? "ok" : null), row.outcome ? pill(row.outcome, row.outcome === "proven" ? "ok" : null) : null,
        h("span", { class: "muted" }, `${row.type} · stage ${row.stage}`)),
      row.diagnosis ? h("div", { class: "text", "data-testid": "diagnosis" },
        `diagnosis: decision ${row.diagnosis.step_id} of the stage — ${row.diagnosis.explanation || "(no explanation)"}`) : null,
      row.reason ? h("div", { class: "muted" }, row.reason) : null,
      h("details", { class: "config" }, h("summary", {}, "the coach's exchange (request, answer, raw reply)"),
        h("pre", { "data-testid": "coach-exchange" }, JSON.stringify({ request: row.request, response: row.response, raw: row.raw }, null, 2))))));
}
