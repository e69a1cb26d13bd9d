// The run page: totals, configuration and one row per episode, filterable by status.

import { h, getJSON, fmtTime, fmtAgo, fmtSeconds, fmtInt, pill, setCrumbs, runCrumbs } from "./dom.js";

const COLUMNS = ["#", "seed", "status", "stages", "optimal", "acceptable", "exceeded",
  "tool calls", "decisions", "tokens", "agent wait", "wall", "finished"];

const filters = {};  // run name -> the status shown

export async function renderRun(page, route) {
  const href = `#/runs/${encodeURIComponent(route.run)}`;
  setCrumbs([["all items", "#/"], [route.run, null]]);
  const run = await getJSON(`/api/runs/${encodeURIComponent(route.run)}`);
  setCrumbs(runCrumbs(run, route.run, null));
  const eps = run.episodes;
  const sum = (key) => eps.reduce((a, e) => a + (e[key] || 0), 0);
  const successes = eps.filter((e) => e.status === "success").length;
  const body = h("tbody");
  const counts = {};
  for (const e of eps) counts[e.status] = (counts[e.status] || 0) + 1;
  let shown = counts[filters[route.run]] ? filters[route.run] : null;  // kept across live refreshes
  const chips = h("div", { class: "tabs", "data-testid": "status-filter" });
  const draw = () => {
    filters[route.run] = shown;
    chips.replaceChildren(
      h("button", { class: `tab ${shown ? "" : "active"}`, onclick: () => { shown = null; draw(); } }, "all", h("span", { class: "n" }, eps.length)),
      ...Object.entries(counts).map(([status, n]) => h("button", { class: `tab ${shown === status ? "active" : ""}`,
        "data-status": status, onclick: () => { shown = status; draw(); } }, status, h("span", { class: "n" }, n))));
    const rows = eps.filter((e) => !shown || e.status === shown).map((e) => episodeRow(e, `${href}/episodes/${e.episode}`));
    body.replaceChildren(...(rows.length ? rows : [h("tr", {}, h("td", { colspan: COLUMNS.length, class: "empty" }, "No episode stored yet."))]));
  };
  draw();
  page.replaceChildren(
    h("div", { class: "episode-head" }, h("h1", {}, run.name), pill(run.state),
      h("span", { class: "mono muted" }, run.preset), h("span", { class: "muted" }, `agent ${run.agent ?? "?"}`),
      h("span", { class: "muted" }, `started ${fmtTime(run.created_at)}`)),
    h("div", { class: "cards" },
      card("episodes", `${eps.length}${run.planned > eps.length ? ` / ${run.planned}` : ""}`, "card-episodes"),
      card("success", `${successes} / ${eps.length}`, "card-success"),
      card("stages passed", `${sum("stages_passed")} / ${sum("stages_total")}`),
      card("optimal", fmtInt(sum("optimal"))), card("acceptable", fmtInt(sum("acceptable"))),
      card("exceeded", fmtInt(sum("exceeded"))), card("tool calls", fmtInt(sum("tool_calls"))),
      card("tokens", fmtInt(sum("total_tokens"))), card("agent wait", fmtSeconds(sum("agent_latency_s"))),
      card("wall", fmtSeconds(sum("wall_s")))),
    h("details", { class: "config" }, h("summary", {}, "configuration"), h("pre", {}, JSON.stringify(run.config, null, 2))),
    h("div", { class: "toolbar" }, h("h2", { style: "margin:0" }, "Episodes"), chips),
    h("div", { class: "panel" }, h("table", { class: "grid", "data-testid": "episodes" },
      h("thead", {}, h("tr", {}, COLUMNS.map((t, i) => h("th", { class: i > 2 && i < 12 ? "num" : "" }, t)))),
      body)));
}

function card(k, v, testid) {
  return h("div", { class: "card" }, h("div", { class: "k" }, k), h("div", { class: "v", "data-testid": testid }, v));
}

function episodeRow(e, link) {
  return h("tr", { class: "link", "data-episode": e.episode, onclick: () => { location.hash = link; } },
    h("td", {}, h("a", { href: link }, `episode ${e.episode}`)), h("td", { class: "mono" }, e.seed),
    h("td", {}, pill(e.status)), h("td", { class: "num" }, `${e.stages_passed}/${e.stages_total}`),
    h("td", { class: "num" }, e.optimal), h("td", { class: "num" }, e.acceptable), h("td", { class: "num" }, e.exceeded),
    h("td", { class: "num" }, e.tool_calls), h("td", { class: "num" }, e.decisions),
    h("td", { class: "num" }, fmtInt(e.total_tokens)), h("td", { class: "num" }, fmtSeconds(e.agent_latency_s)),
    h("td", { class: "num" }, fmtSeconds(e.wall_s)), h("td", { title: fmtTime(e.finished_at) }, fmtAgo(e.finished_at)));
}
