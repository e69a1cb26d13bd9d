// A decision as a chat turn: the input the agent saw, its message and calls, each call's
// result, the stage verification, and (collapsed) the exact model exchanges behind it. The
// episode page draws one per step; the generation page draws one for a candidate.

import { h, fmtInt, fmtSeconds, pill, callSignature } from "./dom.js";

const VERDICT = { 1: "stage finished", 0: "stage ongoing", "-1": "stage failed" };

function collapsible(cls, who, text) {
  const body = h("div", { class: "text" }, text);
  const msg = h("div", { class: `msg ${cls}` }, h("div", { class: "who" }, who), body);
  if (String(text).split("\n").length > 6 || String(text).length > 600) {
    msg.classList.add("collapsed");
    const more = h("button", { class: "more", onclick: (e) => { e.stopPropagation(); msg.classList.toggle("collapsed"); more.textContent = msg.classList.contains("collapsed") ? "show all" : "show less"; } }, "show all");
    msg.appendChild(more);
  }
  return msg;
}

export function turn(step, i, record, usage, frames = []) {
  const stage = (record.stages || [])[step.stage_index] || {};
  const timings = step.timings || {};
  const meta = h("span", { class: "meta" },
    usage && usage.total_tokens ? h("span", { title: `prompt ${usage.prompt_tokens ?? "?"} · completion ${usage.completion_tokens ?? "?"}` }, `${fmtInt(usage.total_tokens)} tokens`) : null,
    usage && usage.latency_s !== undefined ? h("span", { title: "time waiting for the agent" }, `agent ${fmtSeconds(usage.latency_s)}`) : null,
    timings.total_s !== undefined ? h("span", { title: "engine time for this decision" }, `engine ${fmtSeconds(timings.total_s)}`) : null);
  const body = h("div", { class: "turn-body" });
  const inputs = step.inputs || [];
  const sent = inputs.some((input) => input.kind === "env") ? sentTurn(usage) : null;
  if (sent) body.appendChild(feedbackSent(sent, inputs));
  else for (const input of inputs) {
    body.appendChild(collapsible(input.kind === "env" ? "env" : "user", input.kind === "env" ? "engine feedback → agent" : "user", readable(input.content)));
  }
  const decision = step.decision || {};
  const agent = h("div", { class: "msg agent", "data-testid": "agent-message" }, h("div", { class: "who" }, "agent"));
  if (decision.error) {
    agent.appendChild(h("div", { class: "text" }, h("span", { class: "pill bad" }, "invalid decision"), " ", decision.error));
    if (decision.raw) agent.appendChild(h("pre", { class: "muted" }, decision.raw));
  }
  if (decision.say) agent.appendChild(h("div", { class: "text", "data-testid": "say" }, decision.say));
  const calls = step.calls && step.calls.length ? step.calls : (decision.tool_calls || []).map((c) => ({ ...c, requested: true }));
  for (const call of calls) agent.appendChild(callBlock(call));
  if (!decision.say && !calls.length && !decision.error) agent.appendChild(h("div", { class: "text muted" }, "(no message, no tool call)"));
  body.appendChild(agent);
  const verdict = h("div", { class: "verdict", "data-testid": "verdict" },
    h("span", { class: "muted" }, "verification:"),
    pill(step.stage_success), step.stage_success === "FINISH" ? pill(step.stage_state) : null,
    step.verification !== null && step.verification !== undefined ? h("span", {}, VERDICT[step.verification] ?? `score ${step.verification}`) : h("span", { class: "muted" }, "not verified"),
    stage.text_only ? null : h("span", { class: "muted" }, `· ${step.tool_calls} call${step.tool_calls === 1 ? "" : "s"} in stage${stage.max_tool_calls ? ` (max ${stage.max_tool_calls})` : ""}`),
    step.status !== "running" ? pill(`episode ${step.status}`, step.status) : null,
    step.failure_reason ? h("span", { class: "reason" }, step.failure_reason) : null);
  body.appendChild(verdict);
  if (step.judge) body.appendChild(h("div", { class: "feedback" }, `judge: ${JSON.stringify(step.judge)}`));
  if (step.message) body.appendChild(h("div", { class: "feedback" }, `engine: ${step.message}`));
  for (const note of step.notes || []) body.appendChild(h("div", { class: "feedback" }, `note: ${note}`));
  const exchanges = exchangePanel(usage);
  if (exchanges) body.appendChild(exchanges);
  // the rendered frame(s) the agent saw for this decision, beside the conversation
  const seen = frames.length ? h("div", { class: "turn-frames", "data-testid": "frames" },
    frames.map((f) => h("figure", {},
      h("img", { src: f.url, alt: `${f.camera} camera at decision ${i + 1}`, width: f.width, height: f.height, loading: "lazy", "data-testid": "frame" }),
      h("figcaption", { class: "muted" }, f.camera)))) : null;
  return h("article", { class: `turn${seen ? " with-frames" : ""}`, "data-step": step.step_index, "data-testid": "turn" },
    h("div", { class: "turn-head" }, h("span", { class: "step" }, `Decision ${i + 1}`),
      h("span", {}, `stage ${step.stage_index} · ${stage.name || ""}`), meta),
    seen ? h("div", { class: "turn-split" }, body, seen) : body);
}

function callBlock(call) {
  const sig = callSignature(call);
  const ok = call.requested ? null : Boolean(call.ok);
  const flags = [];
  if (call.injected) flags.push("injected error");
  if (call.forgiven) flags.push("forgiven");
  if (call.failure_flag && call.failure_flag !== "NONE" && call.failure_flag !== "none") flags.push(call.failure_flag);
  if (call.attempts > 1) flags.push(`${call.attempts} attempts`);
  return h("div", { class: `call ${ok === null ? "" : ok ? "ok" : "bad"}`, "data-testid": "call" },
    h("div", { class: "sig" }, h("span", {}, sig.robot, h("span", { class: "fn" }, sig.fn), `(${sig.args})`)),
    ok === null ? h("div", { class: "res muted" }, "requested") :
      h("div", { class: "res" }, h("span", { class: "mark" }, ok ? "✓" : "✗"),
        h("span", { "data-testid": "call-result" }, call.message || (ok ? "ok" : "failed")),
        flags.map((f) => h("span", { class: "flag" }, f))));
}

// What the model received for this decision: the messages its request added after the last
// assistant message (the engine's report as the agent rendered it, in the run's report role:
// ``tool`` messages, or a ``user`` message with the tool messages pointing to it), from the
// last exchange that kept its request. None for agents without one (trace, http agents get
// the engine's report as it is).
export function sentTurn(usage) {
  const calls = (usage && Array.isArray(usage.model_calls)) ? usage.model_calls : [];
  for (let i = calls.length - 1; i >= 0; i--) {
    const call = calls[i] || {};
    const messages = call.component !== "summariser" && call.request && Array.isArray(call.request.messages) ? call.request.messages : [];
    if (!messages.length) continue;
    let start = messages.length;
    while (start > 0 && (messages[start - 1] || {}).role !== "assistant") start--;
    if (start === 0) while (start < messages.length && (messages[start] || {}).role === "system") start++;
    const tail = messages.slice(start).filter((m) => m && (m.role === "user" || m.role === "tool"));
    return tail.length ? tail : null;
  }
  return null;
}

function messageText(m) {
  return typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? null);
}

// The "engine feedback → agent" box of a model agent: the messages as sent, each with its
// role; the engine's own report (JSON) stays one click away.
function feedbackSent(sent, inputs) {
  const roles = [...new Set(sent.map((m) => m.role))];
  const text = sent.length === 1 ? messageText(sent[0]) : sent.map((m) => `[${m.role}] ${messageText(m)}`).join("\n");
  const box = collapsible("env", "engine feedback → agent", text);
  box.dataset.testid = "feedback-sent";
  box.querySelector(".who").appendChild(h("span", { class: "muted", "data-testid": "feedback-role" },
    ` · as the model received it: ${roles.join(" + ")} message${sent.length === 1 ? "" : "s"}`));
  box.appendChild(h("details", { class: "engine-report", onclick: (e) => e.stopPropagation() },
    h("summary", {}, "the engine's report"),
    h("pre", { "data-testid": "engine-report" }, inputs.map((input) => readable(input.content)).join("\n\n"))));
  return box;
}

export function readable(content) {
  // Engine feedback is a JSON object: show it as "key: value" lines.
  const text = String(content ?? "");
  if (!text.startsWith("{")) return text;
  try {
    const value = JSON.parse(text);
    if (!value || typeof value !== "object" || Array.isArray(value)) return text;
    return Object.entries(value).map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`).join("\n");
  } catch (e) {
    return text;
  }
}

// The exact model exchanges of a decision (``record.agent.per_decision[i].model_calls``, as
// `magma runs show NAME --episode K --step N` prints them): each request as sent and the raw
// reply, collapsed until asked for.
export function exchangePanel(usage) {
  const calls = (usage && Array.isArray(usage.model_calls)) ? usage.model_calls : [];
  if (!calls.length) return null;
  const panel = h("details", { class: "exchanges", "data-testid": "exchanges", onclick: (e) => e.stopPropagation() },
    h("summary", {}, `model exchange${calls.length === 1 ? "" : "s"} (${calls.length}): the exact request and raw reply`));
  calls.forEach((call, i) => panel.appendChild(exchangeBlock(call, i, calls.length)));
  return panel;
}

function exchangeBlock(call, i, n) {
  const u = call.usage || {};
  const facts = [call.component, call.finish_reason ? `finish ${call.finish_reason}` : null,
    u.total_tokens !== undefined ? `${fmtInt(u.total_tokens)} tokens (${fmtInt(u.prompt_tokens)} in, ${fmtInt(u.completion_tokens)} out)` : null,
    typeof call.latency_s === "number" ? fmtSeconds(call.latency_s) : null,
    call.attempts > 1 ? `${call.attempts} attempts` : null].filter(Boolean).join(" · ");
  const request = call.request;
  const messages = request && Array.isArray(request.messages) ? request.messages : [];
  return h("div", { class: "exchange", "data-testid": "exchange" },
    h("div", { class: "xhead" }, n > 1 ? h("strong", {}, `call ${i + 1} `) : null, h("span", { class: "muted" }, facts)),
    messages.length ? h("div", { class: "xmessages" }, messages.map((m) => h("div", { class: `xmsg ${m.role || ""}` },
      h("span", { class: "role" }, m.role || "?"),
      h("pre", {}, typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? m.tool_calls ?? m, null, 2))))) : null,
    h("details", {}, h("summary", {}, "request as sent (JSON)"),
      h("pre", { class: "xjson", "data-testid": "exchange-request" }, request === undefined ? "(not kept)" : JSON.stringify(request, null, 2))),
    h("div", { class: "xlabel" }, "raw reply"),
    h("pre", { class: "xraw", "data-testid": "exchange-reply" }, call.output_raw ?? "(not kept)"),
    Array.isArray(call.attempt_log) && call.attempt_log.length > 1
      ? h("details", {}, h("summary", {}, `attempts (${call.attempt_log.length})`), h("pre", { class: "xjson" }, JSON.stringify(call.attempt_log, null, 2)))
      : null);
}
