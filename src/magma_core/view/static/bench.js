// The benchmark page: the report of `magma bench report` (the same numbers: the API computes
// them with the bench package), interactive: pick a condition, length bucket or terminal
// status to list its trials, each linking to its episode; compare with another benchmark run;
// set a price per million tokens for the cost rows.

import { h, getJSON, fmtTime, fmtInt, fmtSeconds, pill, setCrumbs } from "./dom.js";
import { barChart, lineChart, chartPanel, pct, rateText } from "./charts.js";

const views = {};  // benchmark name -> {compare, price, filter}: kept across live refreshes

export async function renderBench(page, route) {
  const name = route.bench;
  const view = views[name] || (views[name] = { compare: "", price: "", filter: {} });
  setCrumbs([["all items", "#/"], ["benchmarks", "#/kind/bench"], [name, null]]);
  const query = new URLSearchParams();
  if (view.compare) query.append("compare", view.compare);
  if (view.price !== "") query.set("price_per_mtok", view.price);
  const data = await getJSON(`/api/benchmarks/${encodeURIComponent(name)}?${query}`);
  const runs = Object.keys(data.metrics);
  const m = data.metrics[name];
  const marks = data.significant;
  const series = (key) => runs.map((run) => ({ name: run, rates: data.metrics[run][key] }));
  const rerender = () => renderBench(page, route);
  const pick = (key, value) => {
    view.filter = view.filter[key] === value ? {} : { [key]: value };
    drawTrials();
    trialsPanel.scrollIntoView({ block: "start", behavior: "smooth" });
  };

  // controls
  const compare = h("select", { "aria-label": "compare with", "data-testid": "compare", onchange: () => { view.compare = compare.value; rerender(); } },
    h("option", { value: "" }, "compare with…"), data.others.map((o) => h("option", { value: o, selected: o === view.compare }, o)));
  const price = h("input", { type: "number", min: 0, step: "any", value: view.price, placeholder: "price / M tokens",
    "aria-label": "price per million tokens", "data-testid": "price", class: "filter narrow" });
  price.addEventListener("change", () => { view.price = price.value; rerender(); });

  const done = data.trials.filter((t) => t.episode_status).length;
  const overall = { all: m.success, clean: m.success_clean };
  const passK = Object.keys(m.pass_k).map(Number);
  const lastK = passK.length ? Math.max(...passK) : null;

  // charts
  const conditionChart = barChart({ title: "Success by condition", series: series("success_by_condition"), testid: "chart-conditions",
    onPick: (g) => pick("condition", g), selected: view.filter.condition, marks });
  const robustness = barChart({ title: "Conditional robustness", series: series("conditional_robustness"), testid: "chart-robustness",
    onPick: (g) => pick("condition", g), selected: view.filter.condition });
  const lengthChart = barChart({ title: "Success by length bucket", series: series("success_by_length"), testid: "chart-length",
    onPick: (g) => pick("length_bucket", g), selected: view.filter.length_bucket });
  const passkSeries = runs.length > 1
    ? runs.map((run) => ({ name: run, values: data.metrics[run].pass_k }))
    : [{ name: "all", values: m.pass_k }, ...Object.entries(m.pass_k_by_condition).map(([c, v]) => ({ name: c, values: v }))];
  const passk = lineChart({ title: "pass^k", series: passkSeries, testid: "chart-passk" });

  // trials
  const trialsBody = h("tbody");
  const filterNote = h("span", { class: "muted", "data-testid": "trial-filter" });
  const trialsPanel = h("div", { class: "panel block", "data-testid": "trials-panel" });
  const drawTrials = () => {
    const [[key, value] = []] = Object.entries(view.filter);
    const rows = data.trials.filter((t) => !key || String(t[key]) === value);
    filterNote.replaceChildren(key ? h("span", {}, `${key.replace("_", " ")} = ${value} · ${rows.length} trial${rows.length === 1 ? "" : "s"} `,
      h("button", { class: "linkish", "data-testid": "clear-filter", onclick: () => { view.filter = {}; drawTrials(); } }, "show all")) : `${rows.length} trials`);
    trialsBody.replaceChildren(...rows.map(trialRow));
    if (!rows.length) trialsBody.appendChild(h("tr", {}, h("td", { colspan: 10, class: "empty" }, "No trial stored yet.")));
    page.querySelectorAll("[data-group]").forEach((g) => g.classList.toggle("selected", g.dataset.group === value));
  };
  trialsPanel.append(
    h("div", { class: "panel-head" }, h("h2", {}, "Trials"), filterNote),
    h("table", { class: "grid", "data-testid": "trials" },
      h("thead", {}, h("tr", {}, ["item", "condition", "track", "length", "trial", "status", "stages", "tool calls", "tokens", "episode"]
        .map((c, i) => h("th", { class: i >= 6 && i < 9 ? "num" : "" }, c)))),
      trialsBody));

  page.replaceChildren(
    h("div", { class: "episode-head" }, h("h1", {}, name), pill(done >= data.planned ? "complete" : "incomplete"),
      h("span", { class: "mono muted" }, `suite ${data.suite}`), h("span", { class: "muted" }, `agent ${data.config.agent}`),
      data.config.judge ? h("span", { class: "muted" }, `judge ${data.config.judge}`) : null,
      h("span", { class: "muted" }, `${m.items} items × ${data.config.trials} trials`),
      h("span", { class: "muted mono", title: data.fingerprint }, `fingerprint ${data.fingerprint.slice(0, 12)}`),
      h("span", { class: "muted" }, `started ${fmtTime(data.created_at)}`),
      h("span", { class: "episode-nav" }, compare, price)),
    h("div", { class: "cards" },
      rateCard("success", m.success, "bench-success"), rateCard("success (clean)", m.success_clean, "bench-clean"),
      card("trials", `${done} / ${data.planned}`, "bench-trials"),
      card(`pass^${lastK ?? "k"}`, lastK ? pct({ rate: m.pass_k[lastK] }) : "–", "bench-passk"),
      card("tokens", fmtInt(m.usage.tokens), "bench-tokens"),
      card("tokens / success", m.usage.tokens_per_success === null ? "–" : fmtInt(Math.round(m.usage.tokens_per_success))),
      card("agent wait / episode", m.usage.agent_latency_s_per_episode === null ? "–" : fmtSeconds(m.usage.agent_latency_s_per_episode)),
      card("cost", m.usage.cost === null ? "set a price" : m.usage.cost.toFixed(4), "bench-cost")),
    runs.length > 1 ? h("div", { class: "muted note" }, "* differs from ", h("strong", {}, name), " at p < 0.05 (two-proportion z-test)") : "",
    h("div", { class: "chart-grid" },
      chartPanel("Success by condition", conditionChart, "Whiskers: 95% Wilson interval. Click a condition to list its trials."),
      chartPanel("Conditional robustness", robustness, "Success of a perturbed trial whose clean control trial succeeded."),
      chartPanel("pass^k", passk, "τ²-bench's unbiased estimator over items, k = 1..K."),
      chartPanel("Success by length bucket", lengthChart, "Click a bucket to list its trials.")),
    h("div", { class: "split-even" },
      h("div", { class: "panel block" }, h("div", { class: "panel-head" }, h("h2", {}, "Success rates")),
        rateTable(runs, data, [["all", "success"], ["clean", "success_clean"]], marks, "rates")),
      h("div", { class: "panel block" }, h("div", { class: "panel-head" }, h("h2", {}, "Usage and cost")), usageTable(runs, data))),
    h("div", { class: "panel block" }, h("div", { class: "panel-head" }, h("h2", {}, "Terminal statuses"),
      h("span", { class: "muted" }, "click a count to list those trials")), statusTable(m, pick)),
    h("div", { class: "panel block" }, h("div", { class: "panel-head" }, h("h2", {}, "Noise floor"),
      h("span", { class: "muted" }, "how often identical trials of an item disagree, and the smallest difference a paired run could show")),
      noiseTable(runs, data), noiseCompare(data)),
    h("div", { class: "panel block" }, h("div", { class: "panel-head" }, h("h2", {}, "Failure reasons"),
      h("span", { class: "muted" }, "click a reason to list its trials")), reasonsTable(m, pick)),
    h("div", { class: "panel block" }, h("div", { class: "panel-head" }, h("h2", {}, "Stages"),
      h("span", { class: "muted" }, "index from 0, as the engine's messages count")), stagesTable(m)),
    h("div", { class: "panel block" }, h("div", { class: "panel-head" }, h("h2", {}, "Items"),
      h("span", { class: "muted" }, "click an item to list its trials")), itemsTable(m, pick)),
    h("div", { class: "panel block" }, h("div", { class: "panel-head" }, h("h2", {}, "Success by domain and condition"),
      h("span", { class: "muted" }, "a domain is the scenario of an item's preset or definition")), domainTable(runs, data)),
    h("details", { class: "config" }, h("summary", {}, "more rates: by track, mission-update retention by lag, progression"),
      moreRates(runs, data)),
    trialsPanel,
    h("details", { class: "config" }, h("summary", {}, "configuration"), h("pre", {}, JSON.stringify(data.config, null, 2))));
  drawTrials();
}

function card(k, v, testid, title) {
  return h("div", { class: "card", title }, h("div", { class: "k" }, k), h("div", { class: "v", "data-testid": testid }, v));
}

function rateCard(k, rate, testid) {
  const lowHigh = rate && rate.rate !== null ? `${(100 * rate.low).toFixed(0)}–${(100 * rate.high).toFixed(0)}%` : "";
  return h("div", { class: "card", title: rateText(rate) }, h("div", { class: "k" }, k),
    h("div", { class: "v", "data-testid": testid }, pct(rate)),
    h("div", { class: "sub muted" }, rate && rate.den ? `${rate.num}/${rate.den} · CI ${lowHigh}` : "no trial"));
}

function rateTable(runs, data, fixed, marks, testid) {
  const m = data.metrics[runs[0]];
  const rows = [...fixed.map(([label, key]) => [label, (run) => data.metrics[run][key], label]),
    ...Object.keys(m.success_by_condition).filter((c) => c !== "clean").map((c) => [c, (run) => data.metrics[run].success_by_condition[c], c]),
    ...Object.keys(m.conditional_robustness).map((c) => [`${c} | clean ok`, (run) => data.metrics[run].conditional_robustness[c], null])];
  return h("table", { class: "grid", "data-testid": testid },
    h("thead", {}, h("tr", {}, h("th", {}, ""), runs.map((r) => h("th", {}, r)))),
    h("tbody", {}, rows.map(([label, get, key]) => h("tr", { "data-rate": label }, h("td", {}, label),
      runs.map((run) => h("td", { "data-run": run }, rateText(get(run)),
        key && (marks[run] || []).includes(key) ? h("span", { class: "sigmark" }, " *") : null))))));
}

function domainTable(runs, data) {
  // rows: each domain, then each of its conditions; the same numbers as `magma bench report`
  const rows = [];
  const domains = [...new Set(runs.flatMap((run) => Object.keys(data.metrics[run].success_by_domain || {})))].sort();
  for (const d of domains) {
    rows.push([d, (run) => (data.metrics[run].success_by_domain || {})[d]]);
    const conditions = [...new Set(runs.flatMap((run) => Object.keys((data.metrics[run].success_by_domain_condition || {})[d] || {})))];
    for (const c of conditions) rows.push([`${d} / ${c}`, (run) => ((data.metrics[run].success_by_domain_condition || {})[d] || {})[c]]);
  }
  return h("table", { class: "grid", "data-testid": "domains" },
    h("thead", {}, h("tr", {}, h("th", {}, ""), runs.map((r) => h("th", {}, r)))),
    h("tbody", {}, rows.map(([label, get]) => h("tr", { "data-domain": label }, h("td", {}, label),
      runs.map((run) => h("td", { "data-run": run }, rateText(get(run))))))));
}

function usageTable(runs, data) {
  const keys = Object.keys(data.metrics[runs[0]].usage);
  const fmt = (v) => v === null || v === undefined ? "–" : typeof v === "number" && !Number.isInteger(v) ? v.toFixed(4) : fmtInt(v);
  return h("table", { class: "grid", "data-testid": "usage" },
    h("thead", {}, h("tr", {}, h("th", {}, ""), runs.map((r) => h("th", { class: "num" }, r)))),
    h("tbody", {}, keys.map((k) => h("tr", {}, h("td", {}, k.replaceAll("_", " ")),
      runs.map((run) => h("td", { class: "num" }, fmt(data.metrics[run].usage[k])))))));
}

function statusTable(m, pick) {
  const taxonomy = m.taxonomy;
  return h("table", { class: "grid", "data-testid": "statuses" },
    h("thead", {}, h("tr", {}, h("th", {}, "condition"), taxonomy.map((s) => h("th", { class: "num" }, s.replaceAll("_", " "))))),
    h("tbody", {}, Object.entries(m.terminal_status_counts).map(([c, counts]) => h("tr", { "data-condition": c }, h("td", {}, c),
      taxonomy.map((s) => h("td", { class: "num" }, counts[s]
        ? h("button", { class: `linkish count ${s === "success" ? "ok" : "bad"}`, "data-status": s, onclick: () => pick("status", s) }, counts[s])
        : h("span", { class: "muted" }, "0")))))));
}

const share = (v) => v === null || v === undefined ? "–" : `${(100 * v).toFixed(0)}%`;
const statusList = (counts) => Object.entries(counts).filter(([st]) => st !== "success")
  .map(([st, n]) => `${st.replaceAll("_", " ")} ${n}`).join(", ") || "–";

function noiseTable(runs, data) {
  const floor = (n) => n.floor.difference === null ? `none at ${n.paired_trials} pairs`
    : `±${(100 * n.floor.difference).toFixed(1)} points (${n.floor.pairs} of ${n.paired_trials} pairs)`;
  const rows = [
    ["flip rate", "flip-rate", (n) => n.flip_rate.rate === null ? "–" : `${share(n.flip_rate.rate)} (${n.flip_rate.disagreeing}/${n.flip_rate.pairs} pairs)`],
    ["items with mixed verdicts", "mixed", (n) => `${n.mixed_items.num}/${n.mixed_items.den}`],
    ["smallest real difference", "floor", floor]];
  return h("table", { class: "grid", "data-testid": "noise" },
    h("thead", {}, h("tr", {}, h("th", {}, ""), runs.map((r) => h("th", {}, r)))),
    h("tbody", {}, rows.map(([label, key, cell]) => h("tr", { "data-noise": key }, h("td", {}, label),
      runs.map((run) => h("td", { "data-run": run }, cell(data.metrics[run].noise)))))));
}

function noiseCompare(data) {
  const entries = Object.entries(data.noise_floor || {});
  if (!entries.length) return h("p", { class: "muted note" }, "Compare with another run to see whether its difference is inside the noise floor.");
  return h("div", {}, entries.map(([run, c]) => h("p", { class: `note ${c.verdict === "real" ? "" : "muted"}`, "data-testid": "noise-compare",
    "data-run": run, "data-verdict": c.verdict }, c.message)));
}

function reasonsTable(m, pick) {
  const rows = Object.entries(m.failure_reasons);
  if (!rows.length) return h("p", { class: "muted", "data-testid": "failure-reasons" }, "No failure.");
  return h("table", { class: "grid", "data-testid": "failure-reasons" },
    h("thead", {}, h("tr", {}, ["reason", "trials", "share", "items", "ended at stage", "engine statuses", "example"].map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.map(([st, r]) => h("tr", { "data-reason": st },
      h("td", {}, h("button", { class: "linkish", onclick: () => pick("status", st) }, st.replaceAll("_", " "))),
      h("td", { class: "num", "data-col": "trials" }, r.trials), h("td", { class: "num" }, share(r.share)),
      h("td", { class: "num", title: r.items.join("\n") }, r.items.length),
      h("td", { "data-col": "at-stage" }, Object.entries(r.at_stage).map(([sg, n]) => `${sg}: ${n}`).join(", ") || "–"),
      h("td", {}, Object.entries(r.engine_statuses).map(([sg, n]) => `${sg} ${n}`).join(", ")),
      h("td", { class: "muted" }, r.example || "–")))));
}

function stagesTable(m) {
  return h("table", { class: "grid", "data-testid": "stages" },
    h("thead", {}, h("tr", {}, ["stage", "reached", "passed", "failures ending here"].map((c) => h("th", {}, c)))),
    h("tbody", {}, Object.entries(m.by_stage).map(([sg, r]) => h("tr", { "data-stage": sg },
      h("td", { class: "num" }, sg), h("td", { class: "num", "data-col": "reached" }, r.reached),
      h("td", { class: "num", "data-col": "passed" }, `${r.passed.num} (${share(r.passed.rate)})`),
      h("td", {}, statusList(r.ended_here))))));
}

function itemsTable(m, pick) {
  const mark = { true: "✓", false: "✗", null: "·" };
  return h("table", { class: "grid", "data-testid": "items" },
    h("thead", {}, h("tr", {}, ["item", "condition", "trials", "success", "flip rate", "smallest real difference", "failures"].map((c) => h("th", {}, c)))),
    h("tbody", {}, Object.entries(m.by_item).map(([id, r]) => h("tr", { "data-item-row": id },
      h("td", { class: "mono" }, h("button", { class: "linkish", onclick: () => pick("item_id", id) }, id)),
      h("td", {}, r.condition ?? ""),
      h("td", { class: "mono", "data-col": "verdicts" }, r.verdicts.map((v) => mark[v]).join("")),
      h("td", { class: "num", "data-col": "success" }, `${r.success.num}/${r.success.den}`),
      h("td", { class: "num", "data-col": "flip-rate" }, share((m.noise.by_item[id] || {}).flip_rate)),
      h("td", { class: "num", "data-col": "floor" }, (m.noise.by_item[id] || {}).floor == null ? "none at this K"
        : `±${(100 * m.noise.by_item[id].floor).toFixed(0)} points`),
      h("td", {}, statusList(r.statuses))))));
}

function moreRates(runs, data) {
  const block = (title, key) => {
    const groups = [...new Set(runs.flatMap((r) => Object.keys(data.metrics[r][key])))].sort();
    if (!groups.length) return null;
    return h("div", {}, h("h2", {}, title), h("table", { class: "grid" },
      h("thead", {}, h("tr", {}, h("th", {}, ""), runs.map((r) => h("th", {}, r)))),
      h("tbody", {}, groups.map((g) => h("tr", {}, h("td", {}, g), runs.map((r) => h("td", {}, rateText(data.metrics[r][key][g]))))))));
  };
  const progression = Object.keys(data.metrics[runs[0]].progression);
  return h("div", { class: "inner" }, block("Success by track", "success_by_track"),
    block("Mission-update retention by lag", "mission_update_retention_by_lag"),
    h("h2", {}, "Progression (mean fraction of stages passed)"),
    h("table", { class: "grid" }, h("thead", {}, h("tr", {}, h("th", {}, ""), runs.map((r) => h("th", {}, r)))),
      h("tbody", {}, progression.map((c) => h("tr", {}, h("td", {}, c),
        runs.map((r) => h("td", {}, pct({ rate: data.metrics[r].progression[c] }))))))));
}

function trialRow(t) {
  const open = () => { if (t.href) location.hash = t.href; };
  return h("tr", { class: t.href ? "link" : "", "data-item": t.item_id, "data-trial": t.trial, onclick: open },
    h("td", { class: "mono" }, t.item_id), h("td", {}, t.condition), h("td", {}, t.track ?? ""),
    h("td", {}, t.length_bucket ?? ""), h("td", { class: "num" }, t.trial),
    h("td", {}, pill(t.status, t.success ? "success" : "failed"),
      t.episode_status && t.episode_status !== t.status ? h("span", { class: "muted" }, ` ${t.episode_status}`) : null),
    h("td", { class: "num" }, `${t.stages_passed}/${t.stages_total}`), h("td", { class: "num" }, t.tool_calls ?? ""),
    h("td", { class: "num" }, fmtInt(t.tokens)),
    h("td", {}, t.href ? h("a", { href: t.href, "data-testid": "trial-link" }, `episode ${t.episode}`) : h("span", { class: "muted" }, "not stored")));
}
