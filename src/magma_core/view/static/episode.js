// The episode page: stages with budgets and outcomes, each decision as a chat turn, and the
// top-down replay stepping in sync with the conversation.

import { h, getJSON, fmtTime, fmtSeconds, fmtInt, pill, callSignature, setCrumbs, runCrumbs, episodeName } from "./dom.js";
import { Replay } from "./replay.js";
import { turn } from "./turns.js";

export async function renderEpisode(page, route) {
  const runHref = `#/runs/${encodeURIComponent(route.run)}`;
  const href = `${runHref}/episodes/${route.episode}`;
  setCrumbs([["all items", "#/"], [route.run, runHref], [`episode ${route.episode}`, null]]);
  const base = `/api/runs/${encodeURIComponent(route.run)}/episodes/${route.episode}`;
  const data = await getJSON(base);
  let world = null;
  try { world = await getJSON(`${base}/world`); } catch (e) { if (e.status !== 404) throw e; }
  const record = data.record, summary = data.summary;
  let siblings = [];
  try {
    const run = await getJSON(`/api/runs/${encodeURIComponent(route.run)}`);
    siblings = run.episodes.map((e) => e.episode);
    setCrumbs([...runCrumbs(run, route.run, runHref), [episodeName(run, route.episode), null]]);
  } catch (e) { /* the run page will say */ }
  const at = siblings.indexOf(route.episode);
  const prev = at > 0 ? siblings[at - 1] : null, next = at >= 0 && at < siblings.length - 1 ? siblings[at + 1] : null;
  const steps = record.steps || [];
  const perDecision = (record.agent && record.agent.per_decision) || [];

  // camera images the agent saw (runs with --observe images): decision (from 1) -> cameras
  const frames = {};
  for (const image of data.images || []) (frames[image.decision] ||= []).push(image);
  const frameOf = (i) => (frames[i + 1] || []).map((image) =>
    ({ ...image, url: `${base}/images/${image.decision}/${encodeURIComponent(image.camera)}` }));
  const turns = steps.map((step, i) => turn(step, i, record, perDecision[i], frameOf(i)));
  const stages = (record.stages || []).map((stage) => stageCard(stage));
  const side = h("div", { class: "side" });
  const replayPanel = h("div", { class: "panel replay", "data-testid": "replay" });
  side.appendChild(replayPanel);

  page.replaceChildren(
    h("div", { class: "episode-head" },
      h("h1", {}, `Episode ${route.episode}`), pill(record.status),
      h("span", { class: "mono muted" }, record.task), h("span", { class: "muted" }, `seed ${record.seed}`),
      h("span", { class: "muted" }, record.env_id), h("span", { class: "muted" }, (record.robot_names || []).join(", ")),
      h("span", { class: "muted" }, fmtTime(summary.finished_at)),
      h("span", { class: "episode-nav" },
        prev !== null ? h("a", { href: `${runHref}/episodes/${prev}`, "data-testid": "prev-episode" }, `← episode ${prev}`) : null,
        next !== null ? h("a", { href: `${runHref}/episodes/${next}`, "data-testid": "next-episode" }, `episode ${next} →`) : null)),
    h("div", { class: "cards" },
      card("stages passed", `${summary.stages_passed} / ${summary.stages_total}`, "ep-stages"),
      card("optimal / acc. / exc.", `${summary.optimal} / ${summary.acceptable} / ${summary.exceeded}`),
      card("decisions", summary.decisions, "ep-decisions"), card("tool calls", summary.tool_calls),
      card("tokens", fmtInt(summary.total_tokens)), card("agent wait", fmtSeconds(summary.agent_latency_s)),
      card("engine", fmtSeconds((record.timings || {}).engine_s)), card("wall", fmtSeconds(summary.wall_s))),
    failure(record) || "",
    h("h2", {}, "Stages"),
    h("div", { class: "stages", "data-testid": "stages" }, stages),
    h("div", { class: "split" },
      h("div", { class: "conversation", "data-testid": "conversation" },
        turns.length ? turns : h("div", { class: "panel empty" }, "No decision was made in this episode.")),
      side),
    h("details", { class: "config" }, h("summary", {}, "the episode record (JSON)"),
      h("pre", { "data-testid": "raw-record" }, JSON.stringify(record, null, 2))));

  // the replay and the selection, kept in sync
  let replay = null;
  const slider = h("input", { type: "range", min: 0, max: steps.length, value: 0, "aria-label": "replay position",
    "data-testid": "replay-slider" });
  const caption = h("div", { class: "replay-caption", "data-testid": "replay-caption" });
  const extra = h("div", { class: "extra", "data-testid": "replay-extra" });
  let position = 0;
  const select = (decision, { scroll = true, animate = true } = {}) => {
    position = decision === null || decision === undefined ? 0 : Math.max(0, Math.min(steps.length, decision + 1));
    turns.forEach((t, i) => t.classList.toggle("selected", i === position - 1));
    stages.forEach((card, i) => card.classList.toggle("current", position > 0 && steps[position - 1].stage_index === i));
    slider.value = String(position);
    if (replay) replay.show(position, animate);
    showCaption(caption, extra, steps, position, world);
    if (scroll && position > 0) turns[position - 1].scrollIntoView({ block: "nearest", behavior: "smooth" });
    const target = position > 0 ? `${href}/decisions/${position - 1}` : href;
    if (location.hash !== target) history.replaceState(null, "", target);
  };
  turns.forEach((t, i) => t.addEventListener("click", () => select(i, { scroll: false })));
  stages.forEach((card, i) => card.addEventListener("click", () => {
    const first = steps.findIndex((s) => s.stage_index === i);
    if (first >= 0) select(first);
  }));
  if (world && world.states && world.states.some(Boolean)) {
    const canvas = h("div", {});
    const button = (label, title, testid, fn) => h("button", { title, "aria-label": title, "data-testid": testid, onclick: fn }, label);
    let playing = null;
    const play = h("button", { title: "play", "aria-label": "play", "data-testid": "replay-play", onclick: () => {
      if (playing) { clearInterval(playing); playing = null; play.textContent = "play"; return; }
      if (position >= steps.length) select(null, { scroll: false, animate: false });
      play.textContent = "pause";
      playing = setInterval(() => {
        if (position >= steps.length) { clearInterval(playing); playing = null; play.textContent = "play"; return; }
        select(position);
      }, 900);
    } }, "play");
    replayPanel.append(
      h("div", { class: "muted", style: "font-size:12px;margin-bottom:6px" }, "Replay — the table from above, after each decision"),
      canvas,
      h("div", { class: "controls" },
        button("|◀", "start", "replay-first", () => select(null, { animate: false })),
        button("◀", "previous decision", "replay-prev", () => select(position - 2)),
        play,
        button("▶", "next decision", "replay-next", () => select(Math.min(position, steps.length - 1))),
        button("▶|", "last decision", "replay-last", () => select(steps.length - 1, { animate: false })),
        slider),
      caption, extra, legend(world.scene),
      h("div", { class: "muted", style: "font-size:12px;margin-top:6px" }, "Video (mp4): ",
        h("a", { href: `${base}/video?kind=schematic`, "data-testid": "video-schematic" }, "schematic"), " · ",
        h("a", { href: `${base}/video?kind=auto`, "data-testid": "video-auto" }, "rendered where this machine can")));
    slider.addEventListener("input", () => select(Number(slider.value) - 1, { scroll: true, animate: false }));
    replay = new Replay(canvas, world.scene, world.states);
  } else {
    replayPanel.appendChild(h("div", { class: "noreplay" }, "No world states were recorded for this episode."));
  }
  document.onkeydown = (event) => {
    if (!document.body.contains(slider) || event.target.tagName === "INPUT") return;
    if (event.key === "ArrowRight" || event.key === "j") { select(Math.min(position, steps.length - 1)); event.preventDefault(); }
    if (event.key === "ArrowLeft" || event.key === "k") { select(position - 2); event.preventDefault(); }
  };
  select(route.decision, { scroll: route.decision !== null, animate: false });
  return (params) => select(params.decision);
}

function card(k, v, testid) {
  return h("div", { class: "card" }, h("div", { class: "k" }, k), h("div", { class: "v", "data-testid": testid }, v));
}

function failure(record) {
  if (record.status === "success" || record.status === "running") return null;
  return h("div", { class: "failure", "data-testid": "failure" },
    h("div", {}, h("span", { class: "why" }, `Ended: ${record.status}`), record.reason ? ` — ${record.reason}` : ""),
    record.traceback ? h("details", { open: true }, h("summary", {}, "traceback"), h("pre", { "data-testid": "traceback" }, record.traceback)) : null);
}

function stageCard(stage) {
  const used = stage.tool_calls - (stage.forgiven_tool_calls || 0);
  const max = stage.max_tool_calls, target = stage.target_tool_calls;
  const scaleMax = Math.max(max || 0, target || 0, used, 1);
  const meter = h("div", { class: "meter" }, h("div", { class: "fill", style: `width:${(100 * Math.min(used, scaleMax)) / scaleMax}%` }),
    target ? h("div", { class: "target", style: `left:${(100 * target) / scaleMax}%`, title: "target" }) : null);
  const outcome = stage.success ? pill(stage.success) : pill(stage.started ? "ONGOING" : "not reached", stage.started ? "ONGOING" : "");
  return h("div", { class: `stage ${stage.started ? "" : "unreached"}`, "data-stage": stage.index },
    h("div", { class: "title" }, h("span", {}, `${stage.index}. ${stage.name}`), outcome),
    h("div", { class: "desc", title: stage.description }, stage.description || (stage.text_only ? "text answer" : "")),
    h("div", { class: "budget" },
      stage.text_only ? h("span", { class: "muted" }, "text only") :
        h("span", {}, `${used} tool call${used === 1 ? "" : "s"}`, target ? ` · target ${target}` : "", max ? ` · max ${max}` : "",
          stage.forgiven_tool_calls ? ` · ${stage.forgiven_tool_calls} forgiven` : ""),
      stage.state && (stage.success === "FINISH" || stage.state === "EXCEEDED") ? h("span", {}, " ", pill(stage.state)) : null,
      stage.text_only ? null : meter),
    (stage.error_descriptions || []).length ? h("div", { class: "desc" }, `errors: ${stage.error_descriptions.join("; ")}`) : null);
}




function showCaption(caption, extra, steps, position, world) {
  if (position === 0) {
    caption.replaceChildren(h("strong", {}, "Start"), " — the world before the first decision");
  } else {
    const step = steps[position - 1];
    const calls = (step.calls || []).map((c) => { const s = callSignature(c); return `${s.robot}${s.fn}(${s.args})`; });
    const say = (step.decision || {}).say;
    caption.replaceChildren(h("strong", {}, `After decision ${position} of ${steps.length}`), ` — stage ${step.stage_index}, `,
      pill(step.stage_success), h("div", { class: "what" }, calls.length ? calls.join("  ·  ") : say ? `“${say}”` : "no call"));
  }
  const state = world && world.states ? world.states[position] : null;
  const entries = state && state.extra ? Object.entries(state.extra) : [];
  extra.replaceChildren(...(entries.length ? [h("span", { class: "muted" }, "extra state: "),
    ...entries.map(([k, v]) => h("code", {}, `${k} = ${JSON.stringify(v)}`))] : []));
}

function legend(scene) {
  const items = Object.entries((scene && scene.actors) || {}).filter(([, s]) => s.kind !== "table");
  return h("div", { class: "legend" }, items.map(([name, shape]) => {
    const c = shape.color ? `rgb(${shape.color.slice(0, 3).map((v) => Math.round(v * 255)).join(",")})` : "#868e96";
    return h("span", {}, h("span", { class: "sw", style: `background:${c}${shape.kind === "zone" ? ";opacity:.5" : ""}` }, ""), name);
  }));
}

