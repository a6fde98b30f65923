// fairway's web UI: a single page over the public HTTP API (/api/v1). The
// API key lives in this tab's sessionStorage and goes out as a bearer
// token; every value from the API is set as text, never as HTML.
"use strict";

const main = document.getElementById("main");
const keyName = "fairway.key";
let followAbort = null;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick" || k === "onsubmit" || k === "onchange") e[k] = v;
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function show(...nodes) {
  main.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined));
}

// routeSeq counts route() calls. A page takes a view when it starts: the
// view shows the page only if no newer route() has begun meanwhile, so a
// slow answer for a page left behind never covers the page shown now.
let routeSeq = 0;
function view() {
  const seq = routeSeq;
  return (...nodes) => {
    if (seq !== routeSeq) return false;
    show(...nodes);
    return true;
  };
}

class APIError extends Error {
  constructor(status, body) {
    super((body && body.error && body.error.message) || "HTTP " + status);
    this.status = status;
    this.code = body && body.error && body.error.code;
  }
}

async function api(path, opts = {}) {
  const headers = { Accept: "application/json" };
  const key = sessionStorage.getItem(keyName);
  if (key) headers.Authorization = "Bearer " + key;
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch("/api/v1" + path, {
    method: opts.method || "GET", headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  let body = null;
  try { body = await resp.json(); } catch (e) { body = null; }
  if (resp.status === 401) {
    sessionStorage.removeItem(keyName);
    signIn(body && body.error && body.error.message);
    throw new APIError(401, body);
  }
  if (!resp.ok) throw new APIError(resp.status, body);
  return body;
}

// ---------- times ----------
// Every time reads one way, "2026-11-26 09:00:00 CET": the date, the time
// to the second and the zone, always named. It is this browser's zone
// unless a zone is given (a schedule's own, for its slots).

const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
const timeFormats = new Map();

function timeFormat(zone, locale) {
  const key = zone + " " + locale;
  if (!timeFormats.has(key)) {
    let f;
    const opts = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit",
      hourCycle: "h23", timeZoneName: "short" };
    try { f = new Intl.DateTimeFormat(locale, { ...opts, timeZone: zone }); } catch (e) { f = new Intl.DateTimeFormat(locale, { ...opts, timeZone: browserZone }); }
    timeFormats.set(key, f);
  }
  return timeFormats.get(key);
}

// timeParts is t's date, time and zone name in zone: the zone's common
// abbreviation (EST, CET) where there is one, else its offset (GMT+9).
function timeParts(t, zone) {
  const d = new Date(t);
  const parts = (locale) => Object.fromEntries(timeFormat(zone || browserZone, locale).formatToParts(d).map((x) => [x.type, x.value]));
  const p = parts("en-US");
  if (/^GMT[+-]/.test(p.timeZoneName)) {
    const gb = parts("en-GB").timeZoneName;
    if (!/^GMT[+-]/.test(gb)) p.timeZoneName = gb;
  }
  return p;
}

// when writes t (RFC 3339) in zone (default: this browser's).
function when(t, zone) {
  if (!t) return "-";
  const p = timeParts(t, zone);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second} ${p.timeZoneName}`;
}

// at is when(t, zone) as a <time> whose tooltip names the zone in full
// and gives the instant in UTC.
function at(t, zone) {
  if (!t) return "-";
  const iso = new Date(t).toISOString();
  return el("time", { datetime: iso, title: `${zone || browserZone} (${zone ? "the schedule's zone" : "this browser's zone"}); ${iso.slice(0, 19)}Z in UTC` }, when(t, zone));
}

// zoneName is the name when() gives this browser's zone now.
function zoneName(zone) {
  return timeParts(Date.now(), zone).timeZoneName;
}

// zoneText names this browser's zone in words.
function zoneText() {
  const short = zoneName();
  return (short === browserZone ? short : `${short} (${browserZone})`) + ", this browser's zone";
}

// localValue turns an RFC 3339 time into a datetime-local input's value.
function localValue(t) {
  if (!t) return "";
  const d = new Date(t);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
}

function stateText(s) {
  return el("span", { class: "state-" + s }, s);
}

// confirmButton acts on a second click, within four seconds of the first.
function confirmButton(label, action, danger) {
  const b = el("button", { type: "button", class: danger ? "danger" : "" }, label);
  let armed = null;
  b.onclick = async () => {
    if (!armed) {
      b.textContent = "Confirm " + label.toLowerCase() + "?";
      armed = setTimeout(() => { armed = null; b.textContent = label; }, 4000);
      return;
    }
    clearTimeout(armed);
    armed = null;
    b.disabled = true;
    try { await action(); } catch (e) { flash(e.message); }
    b.disabled = false;
    b.textContent = label;
  };
  return b;
}

// flash shows a message above the page for eight seconds: an error, or
// with ok a notice of what an action did.
function flash(msg, ok) {
  const p = el("p", ok ? { class: "notice", role: "status" } : { class: "error", role: "alert" }, msg);
  main.prepend(p);
  setTimeout(() => p.remove(), 8000);
}

// table lays rows out under headers: each a text, or { text, title }
// (a tooltip that defines the column). The last column of a table with
// row actions is headed "" and its cells are rowActions: it stays in view
// while the table scrolls sideways.
function table(headers, rows, opts = {}) {
  const last = headers.length - 1;
  return el("div", { class: "scroll" }, el("table", { id: opts.id },
    el("thead", {}, el("tr", {}, headers.map((h, i) => el("th", {
      title: h.title, class: opts.actions && i === last ? "rowactions" : null,
    }, h.text === undefined ? h : h.text)))),
    el("tbody", {}, rows)));
}

// rowActions is the cell of a row's actions, kept in view.
function rowActions(...children) {
  return el("td", { class: "rowactions" }, children);
}

function signIn(message) {
  routeSeq++; // a page still loading must not cover the form
  document.getElementById("signout").hidden = true;
  const input = el("input", { type: "password", id: "apikey", autocomplete: "off", placeholder: "API key", "aria-label": "API key" });
  show(el("form", { class: "card signin", onsubmit: (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(keyName, input.value.trim());
    route();
  } },
  el("h1", {}, "Sign in"),
  el("p", { class: "muted" }, "Paste an API key: an admin key sees everything, a tenant key its own jobs."),
  message ? el("p", { class: "error" }, message) : null,
  input,
  el("button", { class: "primary", type: "submit", id: "signin" }, "Sign in")));
}

// ---------- charts ----------

const svgNS = "http://www.w3.org/2000/svg";

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// clock is a chart tick: hours and minutes in this browser's zone (the
// chart's legend names it).
function clock(t) {
  const p = timeParts(t);
  return `${p.hour}:${p.minute}`;
}

function msText(ms) {
  if (ms >= 172800000) return (ms / 86400000).toFixed(1) + " d";
  if (ms >= 7200000) return (ms / 3600000).toFixed(1) + " h";
  if (ms >= 60000) return (ms / 60000).toFixed(ms >= 600000 ? 0 : 1) + " min";
  if (ms >= 1000) return (ms / 1000).toFixed(ms >= 10000 ? 0 : 1) + " s";
  return Math.round(ms) + " ms";
}

// chart draws series over the points as an SVG (viewBox-scaled, so it
// fits a phone): bars stack, lines overlay. Each series is
// { label, cls, value: (point) => number, kind: "bar" | "line" }.
function chart(id, title, points, series, fmt) {
  const W = 600, H = 160, left = 56, bottom = 20, top = 8;
  const n = points.length || 1, bw = (W - left) / n;
  const bars = series.filter((s) => s.kind === "bar"), lines = series.filter((s) => s.kind === "line");
  let top_ = 0;
  for (const p of points) {
    top_ = Math.max(top_, bars.reduce((a, s) => a + s.value(p), 0));
    for (const s of lines) top_ = Math.max(top_, s.value(p));
  }
  const ymax = top_ > 0 ? top_ : 1;
  const y = (v) => H - bottom - (v / ymax) * (H - bottom - top);
  const g = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", id, role: "img",
    "aria-label": `${title}: highest ${fmt(top_)} over ${points.length} steps` });
  g.append(svg("line", { x1: left, x2: W, y1: y(0), y2: y(0), class: "axis" }),
    svg("line", { x1: left, x2: W, y1: y(ymax), y2: y(ymax), class: "grid" }),
    svg("text", { x: left - 6, y: y(ymax) + 4, class: "tick", "text-anchor": "end" }, fmt(top_)),
    svg("text", { x: left - 6, y: y(0), class: "tick", "text-anchor": "end" }, fmt(0)));
  if (points.length) {
    g.append(svg("text", { x: left, y: H - 4, class: "tick" }, clock(points[0].start)),
      svg("text", { x: W, y: H - 4, class: "tick", "text-anchor": "end" }, clock(points[points.length - 1].start)));
  }
  points.forEach((p, i) => {
    let base = 0;
    for (const s of bars) {
      const v = s.value(p);
      if (v > 0) {
        g.append(svg("rect", { x: left + i * bw + 0.5, y: y(base + v), width: Math.max(bw - 1, 1), height: y(base) - y(base + v), class: s.cls },
          svg("title", {}, `${clock(p.start)}: ${fmt(v)} ${s.label}`)));
      }
      base += v;
    }
  });
  for (const s of lines) {
    const pts = points.map((p, i) => `${(left + (i + 0.5) * bw).toFixed(1)},${y(s.value(p)).toFixed(1)}`).join(" ");
    g.append(svg("polyline", { points: pts, class: s.cls, fill: "none" }));
  }
  const legend = el("p", { class: "legend muted" }, series.map((s) => el("span", {}, el("i", { class: "swatch " + s.cls }), s.label)));
  return el("div", { class: "chartbox" }, el("h3", {}, title), g, legend);
}

function failedCount(p) {
  const f = p.finished || {};
  return (f.failed || 0) + (f.timeout || 0) + (f.lost || 0);
}

function activityCharts(series) {
  const pts = series.points || [];
  const count = (v) => String(Math.round(v));
  const total = pts.reduce((a, p) => a + Object.values(p.finished || {}).reduce((x, y) => x + y, 0), 0);
  const leased = pts.reduce((a, p) => a + p.leased, 0);
  const perStep = series.step_ms >= 60000 ? `per ${series.step_ms / 60000} min` : `per ${series.step_ms / 1000} s`;
  return el("div", { class: "card", id: "activity" }, el("h2", {}, "The last hour"),
    el("p", { class: "muted" }, `${total} attempts finished, ${leased} leased. Wait: from a job becoming ready to its lease. Times in ${zoneText()}.`),
    el("div", { class: "charts" },
      chart("throughput", "Attempts finished " + perStep, pts, [
        { label: "succeeded", cls: "s-good", kind: "bar", value: (p) => (p.finished || {}).succeeded || 0 },
        { label: "failed, timed out or lost", cls: "s-bad", kind: "bar", value: failedCount },
        { label: "cancelled", cls: "s-muted", kind: "bar", value: (p) => (p.finished || {}).cancelled || 0 },
      ], count),
      chart("waits", "Wait for a lease", pts, [
        { label: "p95", cls: "s-warn", kind: "line", value: (p) => p.wait_p95_ms },
        { label: "median", cls: "s-accent", kind: "line", value: (p) => p.wait_p50_ms },
      ], msText)));
}

// ---------- pages ----------

// What a lane's counts mean (docs/ui.md and docs/cli.md say the same).
const pendingMeans = "unfinished jobs not running: waiting for their run_at, their dependencies, a retry back-off or a conflicting job, held, or ready.";
const queuedMeans = "the pending jobs that could start now: they wait only for a free slot or resources and their turn (explain's position counts them).";

async function overview() {
  const show = view();
  // costs: admin and worker keys only (a tenant key is refused: no card)
  const [lanes, tenants, series, costs] = await Promise.all([api("/lanes"), api("/tenants"), api("/series"),
    api("/lanes?costs=true").then((l) => l.costs, () => null)]);
  const limit = (used, max) => max ? `${used} of ${max}` : String(used);
  const tenantRows = (tenants.tenants || []).map((t) => el("tr", {},
    el("td", {}, t.name), el("td", { class: t.max_running && t.running >= t.max_running ? "error" : "" }, limit(t.running, t.max_running)),
    el("td", { class: t.max_queued && t.pending + t.running >= t.max_queued ? "error" : "" }, limit(t.pending + t.running, t.max_queued)),
    el("td", {}, quotaText(t)),
    el("td", {}, el("a", { href: "#/jobs?tenant=" + encodeURIComponent(t.name) }, "jobs"))));
  const limitRows = [];
  for (const r of lanes.rate_limits || []) {
    const match = [r.type ? "type " + r.type : "", r.lane ? "lane " + r.lane : ""].filter(Boolean).join(", ") || "every job";
    const buckets = r.buckets && r.buckets.length ? r.buckets : [null];
    for (const b of buckets) {
      limitRows.push(el("tr", {}, el("td", {}, r.name), el("td", {}, match), el("td", {}, r.by || "-"),
        el("td", {}, `${r.rate} per ${r.per}, burst ${r.burst}`), el("td", {}, b ? (b.value || "-") : "-"),
        el("td", { class: b && b.tokens < 1 ? "error" : "" }, b ? b.tokens.toFixed(2) : "full"),
        el("td", {}, b ? when(b.next_token) : "")));
    }
    if (r.buckets_not_full > (r.buckets || []).length) {
      limitRows.push(el("tr", {}, el("td", {}, r.name), el("td", { colspan: 6, class: "muted" }, `${r.buckets_not_full - r.buckets.length} more buckets not full`)));
    }
  }
  const rows = (lanes.lanes || []).map((l) => el("tr", {},
    el("td", {}, l.name),
    el("td", {}, l.paused ? el("span", { class: "badge paused", title: l.pause_note || "" }, "paused") : "active"),
    el("td", {}, l.weight), el("td", {}, l.dominant_share.toFixed(3)),
    el("td", {}, l.pending), el("td", {}, l.queued), el("td", {}, l.running),
    rowActions(el("span", { class: "actions" }, l.paused
      ? confirmButton("Resume", async () => { await api("/lanes/" + encodeURIComponent(l.name) + "/resume", { method: "POST", body: {} }); route(); })
      : confirmButton("Pause", async () => { await api("/lanes/" + encodeURIComponent(l.name) + "/pause", { method: "POST", body: { note: "paused from the UI" } }); route(); }, true)))));
  const cap = lanes.capacity || {};
  show(el("h1", {}, "Overview"),
    el("div", { class: "card" }, el("h2", {}, "Lanes"),
      el("p", { class: "muted" }, "The lane with the smallest weighted dominant share goes next. A paused lane leases nothing; its running jobs finish."),
      table(["Lane", "State", "Weight", "Share", { text: "Pending", title: pendingMeans }, { text: "Queued", title: queuedMeans }, "Running", ""], rows, { actions: true }),
      el("p", { class: "muted", id: "lane-legend" }, el("b", {}, "Pending"), ": " + pendingMeans + " ", el("b", {}, "Queued"), ": " + queuedMeans),
      el("p", { class: "muted" }, `Capacity: ${cap.slots || 0} slots, ${cap.cpu || 0} cpu, ${cap.memory_mb || 0} MB, ${cap.gpu || 0} gpu`)),
    el("div", { class: "card", id: "tenants" }, el("h2", {}, "Tenants"),
      el("p", { class: "muted" }, "Running jobs against max_running, unfinished jobs against max_queued (no limit when none is shown)."),
      table(["Tenant", "Running", "Unfinished", { text: "Quota", title: "what the tenant's running jobs hold against tenants.NAME.quota" }, ""], tenantRows)),
    limitRows.length ? el("div", { class: "card", id: "rate-limits" }, el("h2", {}, "Rate limits"),
      el("p", { class: "muted" }, "Limits on job starts (token buckets). Buckets not listed are full. A job whose bucket is empty waits for its next token; the jobs behind it do not."),
      table(["Limit", "Match", "By", "Rate", "Bucket", "Tokens", "Next token"], limitRows)) : null,
    costs ? costsCard(costs) : null,
    activityCharts(series));
}

// costsCard shows what fair queuing ranks jobs of equal priority by: the
// fairness keys' accumulated costs, lowest (served next) first, and the
// learned run times a job is charged when it starts.
function costsCard(c) {
  const keys = (c.fairness_keys || []).slice(0, 50).map((k) => el("tr", {},
    el("td", {}, k.key), el("td", {}, k.accumulated_cost.toFixed(3)), el("td", {}, k.jobs), el("td", {}, k.idle_since ? at(k.idle_since) : "-")));
  const learned = (c.learned || []).slice(0, 50).map((l) => el("tr", {},
    el("td", {}, l.type), el("td", {}, l.key || "-"), el("td", {}, l.seconds.toFixed(3)), el("td", {}, at(l.last_used))));
  return el("div", { class: "card", id: "costs" }, el("h2", {}, "Fair queuing"),
    el("p", { class: "muted" }, "Among jobs of equal priority, the fairness key with the lowest accumulated cost goes next. A job is charged its learned run time when it starts (alpha " + c.alpha + "; never observed: the type's default_cost, else " + c.default_cost + " s)."),
    table(["Fairness key", "Accumulated cost (s)", "Jobs", "Idle since"], keys),
    table(["Type", "Resource key", "Learned run time (s)", "Last charged"], learned));
}

async function jobs(params) {
  const show = view();
  const q = new URLSearchParams(params);
  const page = await api("/jobs?" + q.toString());
  const filters = el("form", { class: "filters", onsubmit: (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    const next = new URLSearchParams();
    for (const [k, v] of f.entries()) {
      if (!v) continue;
      if (k.endsWith("_local")) next.set(k.slice(0, -6), new Date(v).toISOString());
      else next.set(k, v);
    }
    location.hash = "#/jobs?" + next.toString();
  } },
  el("select", { name: "state", "aria-label": "state" }, ["", "pending", "blocked", "retry_wait", "leased", "running", "succeeded", "failed", "cancelled"]
    .map((s) => el("option", { value: s, selected: params.state === s }, s || "any state"))),
  ["type", "lane", "tenant", "tag", "schedule_id"].map((n) => el("input", { name: n, placeholder: n, value: params[n] || "", "aria-label": n, size: 10 })),
  el("label", { class: "muted" }, "created after ", el("input", { type: "datetime-local", name: "created_after_local", value: localValue(params.created_after), "aria-label": "created after" })),
  el("label", { class: "muted" }, "before ", el("input", { type: "datetime-local", name: "created_before_local", value: localValue(params.created_before), "aria-label": "created before" }),
    " " + zoneName()),
  el("button", { type: "submit" }, "Filter"));
  const jump = el("form", { class: "filters", onsubmit: (ev) => {
    ev.preventDefault();
    const id = new FormData(ev.target).get("id").trim();
    if (id) location.hash = "#/job/" + encodeURIComponent(id);
  } }, el("input", { name: "id", placeholder: "job id", "aria-label": "job id", size: 30 }), el("button", { type: "submit" }, "Open job"));
  const selected = new Set();
  const rows = (page.jobs || []).map((j) => {
    const cmd = commandText(j), why = whyText(j);
    return el("tr", {},
      el("td", {}, el("input", { type: "checkbox", "aria-label": "select " + j.id, "data-id": j.id,
        onchange: (ev) => { if (ev.target.checked) selected.add(j.id); else selected.delete(j.id); } })),
      el("td", {}, el("a", { href: "#/job/" + j.id }, j.id), j.name ? el("div", { class: "muted sub", title: j.name }, j.name) : null),
      el("td", {}, j.type),
      el("td", { class: "clip mono", title: cmd }, cmd),
      el("td", { class: "tags" }, (j.tags || []).flatMap((t) => [el("span", { class: "badge" }, t), " "])),
      el("td", {}, j.tenant + " / " + j.lane), el("td", {}, j.priority),
      el("td", {}, stateText(j.state), j.held ? " (held)" : ""),
      el("td", { class: "clip" + (j.state === "failed" ? " error" : ""), title: why }, why),
      el("td", {}, at(j.created_at)),
      rowActions(jobActions(j, () => route())));
  });
  const more = page.next_cursor
    ? el("a", { href: "#/jobs?" + new URLSearchParams({ ...params, cursor: page.next_cursor }).toString() }, "Next page →") : null;
  const bulk = el("div", { class: "actions bulk" },
    confirmButton("Cancel selected", async () => {
      for (const id of selected) await api("/jobs/" + encodeURIComponent(id) + "/cancel", { method: "POST", body: {} });
      route();
    }, true),
    confirmButton("Retry selected", async () => {
      const r = await api("/jobs/retry", { method: "POST", body: { ids: [...selected] } });
      route();
      setTimeout(() => flash(`${r.retried.length} retried, ${r.skipped.length} left alone`, true), 50);
    }));
  const retryType = el("input", { name: "retry_type", placeholder: "type", "aria-label": "retry type", size: 10 });
  const retryClass = el("select", { name: "retry_class", "aria-label": "failure class" },
    ["", "exit_code", "timeout", "killed", "oom", "lost_worker", "cancelled", "start_error"].map((c) => el("option", { value: c }, c || "any class")));
  const retryMatching = el("div", { class: "actions" }, el("span", { class: "muted" }, "Retry failed jobs of"), retryType, retryClass,
    confirmButton("Retry matching", async () => {
      const r = await api("/jobs/retry", { method: "POST", body: { type: retryType.value || undefined, failure_class: retryClass.value || undefined } });
      route();
      setTimeout(() => flash(`${r.retried.length} retried`, true), 50);
    }));
  show(el("h1", {}, "Jobs"), jump, filters,
    el("div", { class: "card" }, table(["", "Job", "Type", "Command", "Tags", "Tenant / lane", "Priority", "State",
      { text: "Why / last error", title: "a waiting job: why it is not running (explain's code); a failed job: its failure class and last error" }, "Created", ""], rows, { actions: true }),
      rows.length ? null : el("p", { class: "muted" }, "No job matches."), more, rows.length ? bulk : null),
    el("div", { class: "card" }, el("h2", {}, "Bulk retry"), retryMatching));
}

// commandText is a job's command as one line, an argument with spaces or
// quotes in double quotes ("-" for a job with none: its payload is its work).
function commandText(j) {
  const c = j.command || [];
  if (!c.length) return j.payload ? "(payload)" : "-";
  return c.map((a) => (a === "" || /[\s"'\\$`]/.test(a) ? JSON.stringify(a) : a)).join(" ");
}

// whyText is why a waiting job is not running, and a failed job's (or a
// job waiting to retry's) failure class and last error.
function whyText(j) {
  const failure = [j.failure_class, j.last_error].filter(Boolean).join(": ");
  if (j.state === "failed") return failure || "failed";
  if (j.state === "retry_wait" && failure) return [j.reason, "after " + failure].filter(Boolean).join(", ");
  if (j.state === "cancelled") return j.last_error || "";
  return j.reason || "";
}

function jobActions(j, done) {
  const out = el("span", { class: "actions" });
  const id = encodeURIComponent(j.id);
  if (["pending", "blocked", "retry_wait", "leased", "running"].includes(j.state)) {
    out.append(confirmButton("Cancel", async () => { await api("/jobs/" + id + "/cancel", { method: "POST", body: {} }); done(); }, true));
  }
  if (["failed", "cancelled"].includes(j.state)) {
    out.append(confirmButton("Retry", async () => { await api("/jobs/" + id + "/retry", { method: "POST", body: {} }); done(); }));
  }
  if (["pending", "blocked", "retry_wait"].includes(j.state)) {
    out.append(j.held
      ? confirmButton("Release", async () => { await api("/jobs/" + id + "/release", { method: "POST", body: {} }); done(); })
      : confirmButton("Hold", async () => { await api("/jobs/" + id + "/hold", { method: "POST", body: {} }); done(); }));
  }
  return out;
}

// jobTuning changes a waiting job's priority, or a job's max and
// expected time (extend SLA).
function jobTuning(j) {
  const id = encodeURIComponent(j.id);
  const out = el("div", { class: "actions" });
  if (["pending", "blocked", "retry_wait"].includes(j.state)) {
    const prio = el("input", { type: "number", min: 0, max: 1000, value: j.priority, "aria-label": "priority", class: "narrow" });
    out.append(prio, confirmButton("Set priority", async () => {
      await api("/jobs/" + id + "/reprioritize", { method: "POST", body: { priority: Number(prio.value) } });
      route();
    }));
  }
  if (!["succeeded", "failed", "cancelled"].includes(j.state) && (j.timeout_ms || j.expected_ms)) {
    const mins = el("input", { type: "number", min: 1, value: 10, "aria-label": "minutes", class: "narrow" });
    out.append(mins, confirmButton("Extend SLA (minutes)", async () => {
      await api("/jobs/" + id + "/extend-sla", { method: "POST", body: { extend_ms: Number(mins.value) * 60000 } });
      route();
    }));
  }
  return out.childElementCount ? out : null;
}

// quotaText says what a tenant's running jobs hold against its quota.
function quotaText(t) {
  const q = t.quota;
  if (!q) return "none";
  const held = t.held || {};
  const parts = [];
  if (q.cpu !== undefined) parts.push(`cpu ${held.cpu || 0} of ${q.cpu}`);
  if (q.memory_mb !== undefined) parts.push(`memory ${held.memory_mb || 0} of ${q.memory_mb} MB`);
  if (q.gpu !== undefined) parts.push(`gpu ${held.gpu || 0} of ${q.gpu}`);
  return parts.join(", ");
}

// rateLimitText and tenantQuotaText say what explain's blocks hold.
function rateLimitText(r) {
  const bucket = r.by ? `, bucket ${r.by} ${r.value || ""}` : "";
  return `${r.limit}: ${r.rate} per ${r.per}, burst ${r.burst}${bucket}; next token at ${when(r.next_token)}`;
}

function tenantQuotaText(q) {
  return `tenant ${q.tenant}: ${q.resource} ${q.used} of ${q.limit} in use, the job needs ${q.need}`;
}

// reservationText says where a reservation holds capacity and until when.
function reservationText(x) {
  const r = x.reservation;
  const who = r.job_id === x.job_id ? "" : "job " + r.job_id + "'s, ";
  const by = r.starts_by ? "starts by " + when(r.starts_by) : "start unknown";
  return `${who}on worker ${r.worker_id}, ${by}, after ${(r.waits_for || []).join(", ")} end`;
}

async function jobDetail(id) {
  const show = view();
  const enc = encodeURIComponent(id);
  const [jr, evs, execs, workerList] = await Promise.all([api("/jobs/" + enc), api("/jobs/" + enc + "/events"),
    api("/jobs/" + enc + "/executions"), api("/workers").catch(() => null)]);
  const j = jr.job;
  const attempts = attemptRows(j, jr.execution, execs.executions || [], evs.events || [], workerList);
  let explain = null;
  if (!["succeeded", "failed", "cancelled", "running", "leased"].includes(j.state)) {
    try {
      const x = await api("/jobs/" + enc + "/explain");
      explain = el("div", { class: "card", id: "explain" }, el("h2", {}, "Why it is not running"),
        el("dl", { class: "kv" },
          el("dt", {}, "reason"), el("dd", {}, x.code),
          el("dt", {}, "in words"), el("dd", {}, x.message),
          x.blocker ? [el("dt", {}, "blocked by"), el("dd", {}, el("a", { href: "#/job/" + x.blocker }, x.blocker))] : null,
          x.position ? [el("dt", {}, "position"), el("dd", {}, `${x.position} of ${x.queued} queued in lane ${x.lane}`)] : null,
          x.reservation ? [el("dt", {}, "reservation"), el("dd", {}, reservationText(x))] : null,
          x.rate_limit ? [el("dt", {}, "rate limit"), el("dd", {}, rateLimitText(x.rate_limit))] : null,
          x.quota ? [el("dt", {}, "tenant quota"), el("dd", {}, tenantQuotaText(x.quota))] : null,
          x.estimated_start ? [el("dt", {}, "estimated start"), el("dd", {}, when(x.estimated_start))] : null,
          x.estimate_note ? [el("dt", {}, "estimate"), el("dd", {}, x.estimate_note)] : null));
    } catch (e) { explain = null; }
  }
  const logs = el("pre", { class: "logs", id: "logs" });
  if (!show(el("h1", {}, "Job " + j.id),
    el("div", { class: "card" }, el("dl", { class: "kv" },
      el("dt", {}, "state"), el("dd", {}, stateText(j.state), j.held ? " (held)" : ""),
      el("dt", {}, "type"), el("dd", {}, j.type),
      el("dt", {}, "tenant / lane"), el("dd", {}, j.tenant + " / " + j.lane),
      el("dt", {}, "priority"), el("dd", {}, j.priority),
      el("dt", {}, "attempt"), el("dd", {}, attempts.of(j.attempt)),
      el("dt", {}, "created"), el("dd", {}, when(j.created_at)),
      j.traceparent ? [el("dt", {}, "trace"), el("dd", { class: "mono", title: j.traceparent }, traceID(j.traceparent))] : null,
      j.unique ? [el("dt", {}, "unique"), el("dd", { id: "unique" }, uniqueText(j.unique))] : null,
      j.snoozes ? [el("dt", {}, "snoozes"), el("dd", { id: "snoozes" }, `${j.snoozes} of ${j.max_snoozes} (not charged)`)] : null,
      j.last_error ? [el("dt", {}, "last error"), el("dd", { class: "error" }, j.last_error)] : null),
    el("p", {}, jobActions(j, () => route())), jobTuning(j)),
    explain,
    el("div", { class: "card" }, el("h2", {}, "Logs"), logs),
    el("div", { class: "card", id: "attempts" }, el("h2", {}, "Attempts"), table(["Attempt", "Worker", "Started", "Elapsed", "Finished", "Outcome", "Class", "Exit", "CPU", "Peak memory", "Error"],
      attempts.list.map((e) => el("tr", {}, el("td", {}, e.attempt), el("td", { title: e.worker_id || null }, attempts.worker(e.worker_id)),
        el("td", {}, at(e.started_at)), elapsedCell(e), el("td", {}, at(e.finished_at)),
        el("td", {}, e.outcome || (e.started_at ? "running" : "leased")), el("td", {}, e.failure_class || "-"), el("td", {}, e.exit_code ?? "-"),
        ...usageCells(e.usage),
        el("td", { class: "clip", title: e.error || null }, e.error || "-"))))),
    el("div", { class: "card" }, el("h2", {}, "Timeline"), table(["At", "Event", "Attempt", "Actor", "Detail"],
      (evs.events || []).map((e) => el("tr", {}, el("td", {}, at(e.at)), el("td", {}, e.type), el("td", {}, e.attempt || "-"),
        el("td", {}, e.actor || "-"), el("td", { class: "wrap" }, e.detail ? JSON.stringify(e.detail) : ""))))))) return;
  // A job that ends while shown is shown again, ended (its state, its
  // attempts' outcomes and times).
  const ended = ["succeeded", "failed", "cancelled"].includes(j.state) ? null : () => route();
  followLogs(id, logs, attempts, ended);
}

// traceID is the trace id of a W3C traceparent (version-trace-span-flags),
// what a tracing backend searches by.
function traceID(tp) {
  const parts = tp.split("-");
  return parts.length === 4 ? parts[1] : tp;
}

// uniqueText says a job's unique rule: a submit with the same values of
// these fields, while a job that has them is in one of these states (and
// younger than the period), returns that job.
function uniqueText(u) {
  let text = "by " + u.by.join(", ") + "; while " + u.states.join(" or ");
  if (u.period_ms) text += "; period " + durationText(u.period_ms);
  return text;
}

// durationText is milliseconds as the largest whole unit that fits.
function durationText(ms) {
  for (const [unit, size] of [["d", 86400000], ["h", 3600000], ["m", 60000], ["s", 1000]]) {
    if (ms >= size && ms % size === 0) return ms / size + unit;
  }
  return ms + "ms";
}

// attemptRows gathers what the page says of a job's attempts: each
// attempt's execution (the one under way too, which GET /executions lists
// only once it ends), how attempts are numbered ("N of M", M counting
// leases handed back uncharged, as the CLI does), each worker's name, and
// the attempts handed back uncharged with why.
function attemptRows(j, current, execs, events, workerList) {
  const list = execs.slice();
  if (current && !list.some((e) => e.attempt === current.attempt)) list.push(current);
  list.sort((a, b) => a.attempt - b.attempt);
  const names = {};
  for (const w of (workerList && workerList.workers) || []) if (w.name) names[w.id] = w.name;
  const returned = {};
  for (const e of events) {
    if (e.type === "lease_returned" || e.type === "unleased") returned[e.attempt] = (e.detail && e.detail.reason) || "withdrawn before it started";
  }
  const total = Math.max(j.max_attempts > 0 ? j.max_attempts + (j.returned_leases || 0) : 0, j.attempt);
  const byAttempt = Object.fromEntries(list.map((e) => [e.attempt, e]));
  const worker = (id) => (id ? names[id] || id : "-");
  return {
    list, total, worker, last: j.attempt,
    of: (n) => (total > 0 ? `${n} of ${total}` : String(n)),
    // header is the line before an attempt's output in the logs, as
    // `fairway logs` writes it.
    header(n) {
      let s = "attempt " + this.of(n);
      if (returned[n]) return `${s}: handed back uncharged (${returned[n]})`;
      const e = byAttempt[n];
      if (!e) return s;
      if (e.worker_id) s += " on " + worker(e.worker_id);
      let outcome = e.outcome || "running";
      if (e.exit_code !== undefined && e.exit_code !== null && e.outcome !== "succeeded") outcome += ", exit code " + e.exit_code;
      return s + ": " + outcome;
    },
  };
}

// usageCells are an attempt's measured CPU (user + system; the split and
// the source in the title) and peak memory, "-" when not measured.
function usageCells(u) {
  if (!u) return [el("td", {}, "-"), el("td", {}, "-")];
  const title = `user ${msText(u.cpu_user_us / 1000)}, system ${msText(u.cpu_system_us / 1000)}, from ${u.source}`;
  const peak = u.peak_rss_bytes ? (u.peak_rss_bytes / 1048576).toFixed(1) + " MiB" : "-";
  return [el("td", { title }, msText((u.cpu_user_us + u.cpu_system_us) / 1000)), el("td", { title: "from " + u.source }, peak)];
}

// elapsedCell is an attempt's run time: its duration once ended, else
// the time since it started, counting while the page is shown.
function elapsedCell(e) {
  const td = el("td", {});
  if (!e.started_at) { td.textContent = "-"; return td; }
  const start = new Date(e.started_at).getTime();
  if (e.finished_at || e.duration_ms) {
    td.textContent = msText(e.duration_ms || new Date(e.finished_at).getTime() - start);
    return td;
  }
  const tick = () => {
    if (!td.isConnected && td.dataset.shown) { clearInterval(timer); return; }
    if (td.isConnected) td.dataset.shown = "1";
    td.textContent = msText(Math.max(0, Date.now() - start));
  };
  const timer = setInterval(tick, 1000);
  tick();
  return td;
}

// followLogs streams the job's output (Server-Sent Events read with fetch,
// which can send the bearer token), stdout and stderr told apart.
// With attempts (attemptRows), each attempt's output comes after a line
// "==> attempt N of M on WORKER: OUTCOME <==", as `fairway logs` prints
// it, once the job has run more than once.
async function followLogs(id, pre, attempts, ended) {
  let printed = 0;
  const through = (n) => {
    for (let a = printed + 1; a <= n; a++) pre.append(el("span", { class: "attempt-header" }, `==> ${attempts.header(a)} <==\n`));
    printed = Math.max(printed, n);
  };
  if (followAbort) followAbort.abort();
  followAbort = new AbortController();
  const key = sessionStorage.getItem(keyName);
  const headers = { Accept: "text/event-stream" };
  if (key) headers.Authorization = "Bearer " + key;
  try {
    const resp = await fetch("/api/v1/jobs/" + encodeURIComponent(id) + "/logs?follow=true", { headers, signal: followAbort.signal });
    if (!resp.ok || !resp.body) { pre.textContent = "(no output)"; return; }
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        let event = "message", data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) event = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        if (event === "log") {
          const c = JSON.parse(data);
          if (attempts && c.attempt > printed && (attempts.last > 1 || printed > 0 || c.attempt > 1)) through(c.attempt);
          printed = Math.max(printed, c.attempt || 0);
          pre.append(el("span", { class: c.stream }, c.data));
        } else if (event === "end") {
          if (attempts && attempts.last > 1) through(attempts.last);
          pre.append(el("span", { class: "muted" }, `\n— ended: ${JSON.parse(data).state}\n`));
          if (ended) ended();
        }
      }
    }
  } catch (e) {
    if (e.name !== "AbortError") pre.append(el("span", { class: "error" }, "\n(" + e.message + ")"));
  }
}

async function schedules() {
  const show = view();
  const list = await api("/schedules");
  const rows = (list.schedules || []).map((s) => el("tr", {},
    el("td", { class: "clip narrow", title: s.name || s.id }, el("a", { href: "#/schedule/" + s.id }, s.name || s.id)), el("td", {}, s.tenant), el("td", {}, s.spec), el("td", { class: "clip narrow", title: s.timezone }, s.timezone),
    el("td", {}, s.paused ? el("span", { class: "badge paused", title: s.note || "" }, "paused") : "active",
      s.last_failure ? el("span", { class: "badge error", title: s.last_failure.error }, "failing") : null),
    el("td", {}, at(s.next_run_at, s.timezone)),
    el("td", {}, at(s.last_run_at, s.timezone)),
    rowActions(el("span", { class: "actions" },
      s.paused
        ? confirmButton("Resume", async () => { await api("/schedules/" + encodeURIComponent(s.id) + "/resume", { method: "POST", body: {} }); route(); })
        : confirmButton("Pause", async () => { await api("/schedules/" + encodeURIComponent(s.id) + "/pause", { method: "POST", body: { note: "paused from the UI" } }); route(); }, true),
      confirmButton("Trigger", async () => { await api("/schedules/" + encodeURIComponent(s.id) + "/trigger", { method: "POST", body: {} }); route(); }),
      el("a", { href: "#/jobs?schedule_id=" + encodeURIComponent(s.id) }, "runs")))));
  show(el("h1", {}, "Schedules"), el("div", { class: "card" },
    table(["Schedule", "Tenant", "Spec", "Zone", "State", { text: "Next run", title: "in the schedule's zone" }, { text: "Last run", title: "the slot of the last job fired, in the schedule's zone" }, ""], rows, { actions: true }),
    el("p", { class: "muted" }, "A schedule's times are in its own zone, named after each time."),
    rows.length ? null : el("p", { class: "muted" }, "No schedule.")));
}

async function scheduleDetail(id) {
  const show = view();
  const s = await api("/schedules/" + encodeURIComponent(id));
  const inZone = (t) => when(t, s.timezone);
  show(el("h1", {}, "Schedule " + (s.name || s.id)),
    el("div", { class: "card" }, el("dl", { class: "kv" },
      el("dt", {}, "spec"), el("dd", {}, s.spec + " (" + s.timezone + ")"),
      el("dt", {}, "state"), el("dd", {}, s.paused ? "paused" + (s.note ? ": " + s.note : "") : "active"),
      s.last_failure ? el("dt", {}, "failing") : null,
      s.last_failure ? el("dd", { class: "error" }, "the slot at " + inZone(s.last_failure.scheduled_for) + " created no job: " + s.last_failure.error) : null,
      el("dt", {}, "overlap"), el("dd", {}, s.overlap),
      el("dt", {}, "job type"), el("dd", {}, s.template.type))),
    el("div", { class: "card" }, el("h2", {}, "Next runs (in " + s.timezone + ")"),
      el("ul", { id: "upcoming" }, (s.upcoming || []).map((t) => el("li", {}, at(t, s.timezone))))),
    el("div", { class: "card" }, el("h2", {}, "Recent runs"), table(["Slot", "Job", "State", "Started", "Lag"],
      (s.recent || []).map((r) => el("tr", {}, el("td", {}, at(r.scheduled_for, s.timezone)), el("td", {}, el("a", { href: "#/job/" + r.job_id }, r.job_id)),
        el("td", {}, stateText(r.state)), el("td", {}, at(r.started_at, s.timezone)), el("td", {}, r.lag_ms === undefined ? "-" : r.lag_ms + " ms"))))));
}

async function workers() {
  const show = view();
  const [list, running, leased] = await Promise.all([api("/workers"), api("/jobs?state=running&limit=1000"), api("/jobs?state=leased&limit=1000")]);
  const byWorker = {};
  for (const j of [...(running.jobs || []), ...(leased.jobs || [])]) (byWorker[j.worker_id] = byWorker[j.worker_id] || []).push(j);
  const rows = (list.workers || []).map((w) => el("tr", {},
    el("td", {}, w.name || w.id), el("td", {}, w.state), el("td", {}, `${w.running} / ${w.slots}`),
    el("td", { class: "wrap" }, (byWorker[w.id] || []).map((j) => el("a", { href: "#/job/" + j.id, class: "joblink" }, j.type + " " + j.id.slice(-6)))),
    el("td", {}, `${w.cpu || 0} cpu, ${w.memory_mb || 0} MB, ${w.gpu || 0} gpu`),
    el("td", {}, (w.types || ["*"]).join(", ")), el("td", {}, (w.labels || []).join(", ") || "-"), el("td", {}, at(w.last_seen_at))));
  show(el("h1", {}, "Workers"), el("div", { class: "card" },
    table(["Worker", "State", "Running / slots", "Current jobs", "Resources", "Types", "Labels", "Last heartbeat"], rows),
    rows.length ? null : el("p", { class: "muted" }, "No worker is registered.")));
}

// ---------- routing ----------

async function route() {
  const seq = ++routeSeq;
  if (followAbort) { followAbort.abort(); followAbort = null; }
  const hash = location.hash.slice(1) || "/";
  const [path, query] = hash.split("?");
  for (const a of document.querySelectorAll("nav a")) {
    const target = a.getAttribute("href").slice(1);
    a.classList.toggle("active", target === "/" ? path === "/" : path.startsWith(target) || path.startsWith(target.replace(/s$/, "/")));
  }
  const open = await fetch("/api/v1/lanes", { headers: sessionStorage.getItem(keyName) ? { Authorization: "Bearer " + sessionStorage.getItem(keyName) } : {} });
  if (seq !== routeSeq) return; // a newer route() shows its page
  if (open.status === 401) { signIn(sessionStorage.getItem(keyName) ? "That key was refused." : null); return; }
  document.getElementById("signout").hidden = !sessionStorage.getItem(keyName);
  try {
    if (path === "/") await overview();
    else if (path === "/jobs") await jobs(Object.fromEntries(new URLSearchParams(query || "")));
    else if (path.startsWith("/job/")) await jobDetail(decodeURIComponent(path.slice(5)));
    else if (path === "/schedules") await schedules();
    else if (path.startsWith("/schedule/")) await scheduleDetail(decodeURIComponent(path.slice(10)));
    else if (path === "/workers") await workers();
    else show(el("p", {}, "No such page."));
  } catch (e) {
    if (e.status === 401 || seq !== routeSeq) return;
    show(el("h1", {}, "Cannot show this page"), el("p", { class: "error", role: "alert" }, e.message));
  }
}

function applyTheme(t) {
  if (t) document.documentElement.setAttribute("data-theme", t);
  else document.documentElement.removeAttribute("data-theme");
}
applyTheme(localStorage.getItem("fairway.theme"));
document.getElementById("theme").onclick = () => {
  const dark = getComputedStyle(document.documentElement).getPropertyValue("--bg").trim() === "#14171b";
  const next = dark ? "light" : "dark";
  localStorage.setItem("fairway.theme", next);
  applyTheme(next);
};
document.getElementById("signout").onclick = () => { sessionStorage.removeItem(keyName); signIn(); };
window.addEventListener("hashchange", route);
route();
