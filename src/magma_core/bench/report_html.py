"""One self-contained HTML page for benchmark reports: tables and inline SVG plots (success by
condition with 95% intervals, pass^k curves, success by length bucket). No script, no
external file: it opens offline."""

from __future__ import annotations

import html
import json

from magma_core.json_types import JSONDict

COLOURS = ("#3867d6", "#eb3b5a", "#20bf6b", "#f7b731", "#8854d0", "#0fb9b1")
CSS = """body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;
text-align:right}th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}
.sig{font-weight:bold;color:#c0392b}figure{display:inline-block;margin:1em}figcaption{font-size:90%}"""


def _pct(r: JSONDict | None) -> str:
    if not r or r.get("rate") is None:
        return "–"
    return f"{100 * r['rate']:.1f}% ({r['num']}/{r['den']}, {100 * r['low']:.0f}–{100 * r['high']:.0f})"


def bar_chart(title: str, series: dict[str, dict[str, JSONDict]], plot_id: str) -> str:
    """Grouped bars with interval whiskers: ``series[run][group] = rate``."""
    groups = sorted({g for rates in series.values() for g in rates})
    width, height, left, bottom = 640, 260, 40, 40
    slot = (width - left) / max(1, len(groups))
    bar = slot * 0.8 / max(1, len(series))
    parts = _frame(plot_id, title, width, height, height + bottom, left)
    for gi, group in enumerate(groups):
        x0 = left + gi * slot + slot * 0.1
        parts.append(f'<text x="{x0:.1f}" y="{height + 16}" font-size="11">{html.escape(group)}</text>')
        for si, (run, rates) in enumerate(series.items()):
            r = rates.get(group)
            if not r or r["rate"] is None:
                continue
            x = x0 + si * bar
            scale = height - 20
            y = height - r["rate"] * scale
            parts.append(f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{bar - 2:.1f}" '
                         f'height="{r["rate"] * scale:.1f}" fill="{COLOURS[si % len(COLOURS)]}">'
                         f'<title>{html.escape(run)} {html.escape(group)}: {_pct(r)}</title></rect>')
            cx = x + (bar - 2) / 2
            parts.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{height - r["high"] * scale:.1f}" '
                         f'y2="{height - r["low"] * scale:.1f}" stroke="#000"/>')
    parts.append(_legend(list(series), left, height + 32))
    return "".join(parts) + "</svg>"


def _frame(plot_id: str, title: str, width: int, height: int, total: int, left: int) -> list[str]:
    """The opening of a plot's SVG with its 0/50/100% grid lines."""
    parts = [f'<svg id="{plot_id}" class="plot" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{total}" role="img"><title>{html.escape(title)}</title>']
    for tick in (0, 0.5, 1):
        y = height - tick * (height - 20)
        parts.append(f'<line x1="{left}" x2="{width}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
                     f'<text x="4" y="{y + 4:.1f}" font-size="11">{int(tick * 100)}%</text>')
    return parts


def line_chart(title: str, series: dict[str, dict[str, float | None]], plot_id: str) -> str:
    """pass^k curves: ``series[run][k] = value``."""
    width, height, left = 640, 240, 40
    ks = sorted({int(k) for values in series.values() for k in values}) or [1]
    span = max(1, max(ks) - 1)
    parts = _frame(plot_id, title, width, height, height + 50, left)
    for k in ks:
        x = left + 20 + (k - 1) / span * (width - left - 60)
        parts.append(f'<text x="{x:.1f}" y="{height + 16}" font-size="11">k={k}</text>')
    for si, values in enumerate(series.values()):
        points = []
        for k in ks:
            v = values.get(str(k))
            if v is not None:
                x = left + 20 + (k - 1) / span * (width - left - 60)
                points.append((x, height - v * (height - 20)))
        colour = COLOURS[si % len(COLOURS)]
        parts.append(f'<polyline class="curve" fill="none" stroke="{colour}" stroke-width="2" points="'
                     + " ".join(f"{x:.1f},{y:.1f}" for x, y in points) + '"/>')
        parts += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>' for x, y in points]
    parts.append(_legend(list(series), left, height + 36))
    return "".join(parts) + "</svg>"


def _legend(names: list[str], x: float, y: float) -> str:
    return "".join(f'<rect x="{x + i * 150}" y="{y - 9}" width="10" height="10" '
                   f'fill="{COLOURS[i % len(COLOURS)]}"/><text x="{x + i * 150 + 14}" y="{y}" '
                   f'font-size="11">{html.escape(n)}</text>' for i, n in enumerate(names))


def _rate_table(title: str, rows: dict[str, JSONDict], runs: list[str],
                significant: dict[str, set[str]] | None = None) -> str:
    keys = sorted({k for run in runs for k in rows[run]})
    head = "".join(f"<th>{html.escape(r)}</th>" for r in runs)
    body = []
    for key in keys:
        cells = []
        for run in runs:
            mark = significant and key in significant.get(run, set())
            cls = ' class="sig"' if mark else ""
            cells.append(f"<td{cls}>{_pct(rows[run].get(key))}{' *' if mark else ''}</td>")
        body.append(f"<tr><td>{html.escape(key)}</td>{''.join(cells)}</tr>")
    return (f'<h2>{html.escape(title)}</h2><table class="rates"><tr><th></th>{head}</tr>'
            + "".join(body) + "</table>")


def _breakdown(reports: dict[str, JSONDict], noise: dict[str, JSONDict]) -> str:
    """The noise floor of each run, the compare sentences, and each run's failure reasons."""
    runs = list(reports)

    def floor(n: JSONDict) -> str:
        d = n["floor"]["difference"]
        return "none" if d is None else f"±{100 * d:.1f} points"
    rows = [("flip rate", lambda n: "–" if n["flip_rate"]["rate"] is None else
             f"{100 * n['flip_rate']['rate']:.0f}% ({n['flip_rate']['disagreeing']}/{n['flip_rate']['pairs']} pairs)"),
            ("smallest real difference", floor)]
    parts = ['<h2>Noise floor</h2><table id="noise"><tr><th></th>'
             + "".join(f"<th>{html.escape(r)}</th>" for r in runs) + "</tr>"]
    parts += [f"<tr><td>{label}</td>" + "".join(f"<td>{html.escape(cell(reports[r]['noise']))}</td>" for r in runs)
              + "</tr>" for label, cell in rows]
    parts.append("</table>" + "".join(f'<p class="noise-compare">{html.escape(c["message"])}</p>'
                                      for c in noise.values()))
    for run in runs:
        reasons = reports[run].get("failure_reasons", {})
        parts.append(f"<h2>Failure reasons: {html.escape(run)}</h2><table><tr><th>reason</th><th>trials</th>"
                     "<th>items</th><th>at stage (from 0)</th><th>example</th></tr>")
        parts += [f"<tr><td>{html.escape(st)}</td><td>{r['trials']}</td><td>{len(r['items'])}</td><td>"
                  + html.escape(", ".join(f"{k}: {n}" for k, n in r["at_stage"].items()))
                  + f'</td><td style="text-align:left">{html.escape(r["example"])}</td></tr>'
                  for st, r in reasons.items()]
        parts.append("</table>")
    return "".join(parts)


def render(reports: dict[str, JSONDict], significant: dict[str, set[str]],
           noise: dict[str, JSONDict] | None = None) -> str:
    """The page for one or more runs' metrics (the first is the baseline of ``significant``
    and of ``noise``, :func:`magma_core.bench.report_tables.noise_comparisons`)."""
    runs = list(reports)
    overall = {r: {"all": m["success"], "clean": m["success_clean"]} for r, m in reports.items()}
    by_cond = {r: m["success_by_condition"] for r, m in reports.items()}
    robust = {r: m["conditional_robustness"] for r, m in reports.items()}
    length = {r: m["success_by_length"] for r, m in reports.items()}
    track = {r: m["success_by_track"] for r, m in reports.items()}
    lags = {r: m["mission_update_retention_by_lag"] for r, m in reports.items()}
    domains = {r: m.get("success_by_domain", {}) for r, m in reports.items()}
    domain_condition = {r: {f"{d} / {c}": rate for d, per in m.get("success_by_domain_condition", {}).items()
                            for c, rate in per.items()} for r, m in reports.items()}
    status_rows = "".join(
        f"<tr><td>{html.escape(r)} / {html.escape(c)}</td>"
        + "".join(f"<td>{counts.get(s, 0)}</td>" for s in reports[r]["taxonomy"]) + "</tr>"
        for r in runs for c, counts in reports[r]["terminal_status_counts"].items())
    taxonomy = reports[runs[0]]["taxonomy"]
    usage_keys = list(reports[runs[0]]["usage"])
    usage_rows = "".join(
        f"<tr><td>{k}</td>" + "".join(f"<td>{_num(reports[r]['usage'][k])}</td>" for r in runs)
        + "</tr>" for k in usage_keys)
    progression = "".join(
        f"<tr><td>{html.escape(c)}</td>" + "".join(
            f"<td>{_num(reports[r]['progression'].get(c))}</td>" for r in runs) + "</tr>"
        for c in sorted({c for r in runs for c in reports[r]["progression"]}))
    embedded = json.dumps(reports).replace("</", "<\\/")
    note = ("<p>* differs from the first run at p &lt; 0.05 (two-proportion z-test).</p>"
            if len(runs) > 1 else "")
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>MAGMA benchmark report: {html.escape(', '.join(runs))}</title><style>{CSS}</style></head><body>
<h1>MAGMA benchmark report</h1><p>Runs: {html.escape(', '.join(runs))}. Rates: percent
(successes/trials, 95% Wilson interval).</p>{note}
<figure>{bar_chart("Success by condition", by_cond, "plot-conditions")}
<figcaption>Success by condition (whiskers: 95% Wilson interval)</figcaption></figure>
<figure>{line_chart("pass^k", {r: m["pass_k"] for r, m in reports.items()}, "plot-passk")}
<figcaption>pass^k, k = 1..K (unbiased estimator)</figcaption></figure>
<figure>{bar_chart("Success by length bucket", length, "plot-length")}
<figcaption>Success by length bucket</figcaption></figure>
{_rate_table("Success", overall, runs, significant)}
{_rate_table("Success by condition", by_cond, runs, significant)}
{_rate_table("Conditional robustness (paired clean control succeeded)", robust, runs)}
{_rate_table("Success by length bucket", length, runs)}
{_rate_table("Success by track", track, runs)}
{_rate_table("Mission-update retention by lag", lags, runs)}
{_rate_table("Success by domain", domains, runs)}
{_rate_table("Success by domain and condition", domain_condition, runs)}
<h2>Progression (mean fraction of stages passed)</h2><table><tr><th></th>
{"".join(f"<th>{html.escape(r)}</th>" for r in runs)}</tr>{progression}</table>
<h2>Terminal statuses</h2><table id="statuses"><tr><th>run / condition</th>
{"".join(f"<th>{s}</th>" for s in taxonomy)}</tr>{status_rows}</table>
{_breakdown(reports, noise or {})}
<h2>Usage and cost</h2><table><tr><th></th>{"".join(f"<th>{html.escape(r)}</th>" for r in runs)}</tr>
{usage_rows}</table>
<script type="application/json" id="metrics">{embedded}</script>
</body></html>"""


def _num(value: object) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
