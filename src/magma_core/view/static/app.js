// MAGMA viewer: a hash-routed single page over the viewer's JSON API.
//   #/                                   every stored item (runs; benchmarks, generations later)
//   #/runs/NAME                          a run and its episodes
//   #/runs/NAME/episodes/K[/decisions/D] an episode: stages, conversation, replay

import { h, getJSON, fmtTime, fmtAgo, fmtSeconds, fmtInt, pill, setCrumbs } from "./dom.js";
import { renderEpisode } from "./episode.js";

const page = document.getElementById("page");
const live = { stamp: null, timer: null, current: null };

function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "runs" && parts.length >= 2) {
    if (parts[2] === "episodes" && parts.length >= 4) {
      const decision = parts[4] === "decisions" && parts[5] !== undefined ? Number(parts[5]) : null;
      return { name: "episode", run: parts[1], episode: Number(parts[3]), decision };
    }
    return { name: "run", run: parts[1] };
  }
  const kind = parts[0] === "kind" ? parts[1] : null;
  return { name: "home", kind };
}


function statusBar(statuses, total) {
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

// -- home ------------------------------------------------------------------------------------
async function renderHome(route) {
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
      rows.length ? "Nothing matches the filter." : "Nothing stored yet. Run `magma run PRESET --out FOLDER`: it shows up here as it goes.")));
  };
  filter.addEventListener("input", draw);
  draw();
  page.replaceChildren(
    h("h1", {}, "Stored runs"),
    h("div", { class: "muted" }, "Runs, benchmark results and generations in this store, newest first."),
    h("div", { class: "toolbar" }, tabs, filter),
    h("div", { class: "panel" }, h("table", { class: "grid", "data-testid": "items" },
      h("thead", {}, h("tr", {}, h("th", {}, "kind"), h("th", {}, "name"), h("th", {}, "what"), h("th", {}, "agent"),
        h("th", {}, "state"), h("th", {}, "episodes"), h("th", { class: "num" }, "stages passed"),
        h("th", { class: "num" }, "tokens"), h("th", {}, "updated"))),
      body)));
}

function itemRow(item) {
  const c = item.counts || {};
  const statuses = c.statuses || {};
  const done = c.episodes ?? 0;
  return h("tr", { class: "link", "data-item": item.id, onclick: () => { location.hash = item.href; } },
    h("td", {}, pill(item.kind, "kind")),
    h("td", {}, h("a", { href: item.href }, item.title)),
    h("td", { class: "mono" }, item.subtitle || ""),
    h("td", { class: "mono" }, item.agent || ""),
    h("td", {}, pill(item.state)),
    h("td", {}, statusBar(statuses, done), `${statuses.success || 0}/${done} ok`,
      c.planned > done ? h("span", { class: "muted" }, ` (of ${c.planned})`) : null),
    h("td", { class: "num" }, `${c.stages_passed ?? 0}/${c.stages_total ?? 0}`),
    h("td", { class: "num" }, fmtInt(c.total_tokens)),
    h("td", { title: fmtTime(item.updated_at) }, fmtAgo(item.updated_at)));
}

// -- a run ----------------------------------------------------------------------------------
async function renderRun(route) {
  const href = `#/runs/${encodeURIComponent(route.run)}`;
  setCrumbs([["all items", "#/"], [route.run, null]]);
  const run = await getJSON(`/api/runs/${encodeURIComponent(route.run)}`);
  const eps = run.episodes;
  const sum = (key) => eps.reduce((a, e) => a + (e[key] || 0), 0);
  const card = (k, v, testid) => h("div", { class: "card" }, h("div", { class: "k" }, k), h("div", { class: "v", "data-testid": testid }, v));
  const successes = eps.filter((e) => e.status === "success").length;
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
    h("h2", {}, "Episodes"),
    h("div", { class: "panel" }, h("table", { class: "grid", "data-testid": "episodes" },
      h("thead", {}, h("tr", {}, ["#", "seed", "status", "stages", "optimal", "acceptable", "exceeded",
        "tool calls", "decisions", "tokens", "agent wait", "wall", "finished"].map((t, i) =>
        h("th", { class: i > 2 && i < 12 ? "num" : "" }, t)))),
      h("tbody", {}, eps.length ? eps.map((e) => {
        const link = `${href}/episodes/${e.episode}`;
        return h("tr", { class: "link", "data-episode": e.episode, onclick: () => { location.hash = link; } },
          h("td", {}, h("a", { href: link }, `episode ${e.episode}`)), h("td", { class: "mono" }, e.seed),
          h("td", {}, pill(e.status)), h("td", { class: "num" }, `${e.stages_passed}/${e.stages_total}`),
          h("td", { class: "num" }, e.optimal), h("td", { class: "num" }, e.acceptable), h("td", { class: "num" }, e.exceeded),
          h("td", { class: "num" }, e.tool_calls), h("td", { class: "num" }, e.decisions),
          h("td", { class: "num" }, fmtInt(e.total_tokens)), h("td", { class: "num" }, fmtSeconds(e.agent_latency_s)),
          h("td", { class: "num" }, fmtSeconds(e.wall_s)), h("td", { title: fmtTime(e.finished_at) }, fmtAgo(e.finished_at)));
      }) : h("tr", {}, h("td", { colspan: 13, class: "empty" }, "No episode stored yet."))))));
}

// -- routing and live refresh ---------------------------------------------------------------
async function render(soft = false) {
  const route = parseRoute();
  const key = JSON.stringify({ ...route, decision: null });
  if (soft && route.name === "episode") return;  // a stored episode never changes
  if (route.name === "episode" && live.current && live.current.key === key && live.current.select) {
    live.current.select(route.decision);
    return;
  }
  const scrollY = soft ? window.scrollY : 0;
  try {
    if (route.name === "run") await renderRun(route);
    else if (route.name === "episode") {
      live.current = { key, select: await renderEpisode(page, route) };
      return;
    } else await renderHome(route);
    live.current = { key, select: null };
  } catch (error) {
    live.current = null;
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
