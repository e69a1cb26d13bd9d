// MAGMA viewer: a hash-routed single page over the viewer's JSON API.
//   #/                                   every stored item (runs; benchmarks, generations later)
//   #/runs/NAME                          a run and its episodes
//   #/runs/NAME/episodes/K[/decisions/D] an episode: stages, conversation, replay
//   #/benchmarks/NAME                    a benchmark run's report and trials
//   #/generations/NAME[/KIND/ID]         a generation tree; KIND situation|candidate selected

import { h, getJSON, fmtTime, fmtAgo, fmtInt, pill, setCrumbs, statusBar } from "./dom.js";
import { renderBench } from "./bench.js";
import { renderEpisode } from "./episode.js";
import { renderGeneration } from "./generation.js";
import { renderRun } from "./run.js";

const page = document.getElementById("page");
const live = { stamp: null, timer: null, current: null };

// Pages by URL: a pattern over the hash's path (":name" captures a part) and the function
// drawing it into the page. ``live: false`` pages show stored, unchanging things and are not
// redrawn when the store changes; ``selection`` names the parameters that pick something on a
// page already drawn (the page returns a function taking the new parameters). A new kind of
// item adds its pages here and its lister in ``catalog.py``.
const ROUTES = [
  { pattern: "runs/:run/episodes/:episode/decisions/:decision", page: renderEpisode, live: false, selection: ["decision"] },
  { pattern: "runs/:run/episodes/:episode", page: renderEpisode, live: false, selection: ["decision"] },
  { pattern: "benchmarks/:bench", page: renderBench, live: true },
  { pattern: "generations/:gen/:nodekind/:node", page: renderGeneration, live: true, selection: ["nodekind", "node"] },
  { pattern: "generations/:gen", page: renderGeneration, live: true, selection: ["nodekind", "node"] },
  { pattern: "runs/:run", page: renderRun, live: true },
  { pattern: "kind/:kind", page: renderHome, live: true },
  { pattern: "", page: renderHome, live: true },
];

function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  for (const route of ROUTES) {
    const names = route.pattern.split("/").filter(Boolean);
    if (names.length !== parts.length) continue;
    const params = {};
    if (names.every((name, i) => (name.startsWith(":") ? (params[name.slice(1)] = parts[i], true) : name === parts[i]))) {
      for (const key of ["episode", "decision", "node"]) if (key in params) params[key] = Number(params[key]);
      return { ...route, params: { decision: null, nodekind: null, node: null, ...params } };
    }
  }
  return { pattern: "?", page: notFound, live: false, params: {} };
}

async function notFound() {
  const error = new Error(`no page at ${location.hash}`);
  error.status = 404;
  throw error;
}

// -- home ------------------------------------------------------------------------------------
async function renderHome(page, route) {
  setCrumbs([["all items", null]]);
  const data = await getJSON("/api/items");
  const kinds = data.kinds;
  const active = route.kind && kinds.some((k) => k.kind === route.kind) ? route.kind : null;
  const counts = {};
  for (const item of data.items) counts[item.kind] = (counts[item.kind] || 0) + 1;
  const tabs = h("div", { class: "tabs", role: "tablist" },
    h("a", { class: `tab ${active ? "" : "active"}`, href: "#/" }, "All", h("span", { class: "n" }, data.items.length)),
    kinds.map((k) => h("a", { class: `tab ${active === k.kind ? "active" : ""}`, href: `#/kind/${k.kind}` },
      k.label, h("span", { class: "n" }, counts[k.kind] || 0))));
  const filter = h("input", { class: "filter", type: "search", placeholder: "Filter by name, preset or agent…",
    "aria-label": "filter" });
  const body = h("tbody");
  const rows = data.items.filter((item) => !active || item.kind === active);
  const draw = () => {
    const needle = filter.value.trim().toLowerCase();
    const shown = rows.filter((it) => !needle || [it.title, it.subtitle, it.agent].join(" ").toLowerCase().includes(needle));
    body.replaceChildren(...shown.map(itemRow));
    if (!shown.length) body.appendChild(h("tr", {}, h("td", { colspan: 9, class: "empty" },
      rows.length ? "Nothing matches the filter." : "Nothing stored yet. Run `magma run PRESET --out FOLDER` (or `magma bench run`, `magma gen`): it shows up here as it goes.")));
  };
  filter.addEventListener("input", draw);
  draw();
  page.replaceChildren(
    h("h1", {}, "Stored runs, benchmarks and generations"),
    h("div", { class: "muted" }, "Runs, benchmark results and generations in this store, newest first."),
    h("div", { class: "toolbar" }, tabs, filter),
    h("div", { class: "panel" }, h("table", { class: "grid", "data-testid": "items" },
      h("thead", {}, h("tr", {}, h("th", {}, "kind"), h("th", {}, "name"), h("th", {}, "what"), h("th", {}, "agent"),
        h("th", {}, "state"), h("th", {}, "progress"), h("th", { class: "num" }, "stages passed"),
        h("th", { class: "num" }, "tokens"), h("th", {}, "updated"))),
      body)));
}

function itemRow(item) {
  const c = item.counts || {};
  const statuses = c.statuses || {};
  const done = c.episodes ?? 0;
  return h("tr", { class: "link", "data-item": item.id, onclick: () => { location.hash = item.href; } },
    h("td", {}, pill(item.kind, "kind")),
    h("td", { class: "wrap" }, h("a", { href: item.href }, item.title)),
    h("td", { class: "mono wrap" }, item.subtitle || ""),
    h("td", { class: "mono wrap" }, item.agent || ""),
    h("td", {}, pill(item.state)),
    h("td", {}, statusBar(statuses, done),
      item.kind === "gen" ? `${done} candidates, ${statuses.success || 0} successful` : `${statuses.success || 0}/${done} ok`,
      c.planned > done ? h("span", { class: "muted" }, ` (of ${c.planned}${item.kind === "run" ? "" : ` ${c.unit}`})`) : null),
    h("td", { class: "num" }, c.stages_total === undefined ? "–" : `${c.stages_passed ?? 0}/${c.stages_total ?? 0}`),
    h("td", { class: "num" }, fmtInt(c.total_tokens)),
    h("td", { title: fmtTime(item.updated_at) }, fmtAgo(item.updated_at)));
}

// -- routing and live refresh ---------------------------------------------------------------
async function render(soft = false) {
  const route = parseRoute();
  const shown = { pattern: route.page.name, ...route.params };
  for (const name of route.selection || []) shown[name] = null;
  const key = JSON.stringify(shown);
  const same = live.current && live.current.key === key;
  if (soft && (!route.live || !same)) return;
  if (!soft && same && live.current.select) {  // another decision or node of the page on screen
    live.current.select(route.params);
    return;
  }
  const scrollY = soft ? window.scrollY : 0;
  try {
    const select = await route.page(page, route.params);
    live.current = { key, select: typeof select === "function" ? select : null };
  } catch (error) {
    live.current = { key, select: null };  // a live page retries when the store changes
    page.replaceChildren(h("div", { class: "panel pad" }, h("h1", {}, error.status === 404 ? "Not found" : "Error"),
      h("p", { "data-testid": "error" }, error.message), h("p", {}, h("a", { href: "#/" }, "Back to the list"))));
  }
  if (soft) window.scrollTo(0, scrollY);
}

async function poll() {
  const badge = document.getElementById("live");
  try {
    const { stamp } = await getJSON("/api/stamp");
    badge.classList.remove("stale");
    document.getElementById("live-text").textContent = "live";
    if (live.stamp !== null && stamp !== live.stamp) {
      badge.classList.add("flash");
      setTimeout(() => badge.classList.remove("flash"), 600);
      live.stamp = stamp;
      await render(true);
    }
    live.stamp = stamp;
  } catch (e) {
    badge.classList.add("stale");
    document.getElementById("live-text").textContent = "offline";
  }
}

window.addEventListener("hashchange", () => render(false));
render(false);
poll();
live.timer = setInterval(poll, 2000);
