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

function when(t) {
  if (!t) return "-";
  const d = new Date(t);
  return d.toISOString().replace("T", " ").slice(0, 19);
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

function table(headers, rows) {
  return el("div", { class: "scroll" }, el("table", {},
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows)));
}

function signIn(message) {
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

function clock(t) {
  return new Date(t).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function msText(ms) {
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
    el("p", { class: "muted" }, `${total} attempts finished, ${leased} leased. Wait: from a job becoming ready to its lease.`),
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

async function overview() {
  const [lanes, tenants, series] = await Promise.all([api("/lanes"), api("/tenants"), api("/series")]);
  const limit = (used, max) => max ? `${used} of ${max}` : String(used);
  const tenantRows = (tenants.tenants || []).map((t) => el("tr", {},
    el("td", {}, t.name), el("td", { class: t.max_running && t.running >= t.max_running ? "error" : "" }, limit(t.running, t.max_running)),
    el("td", { class: t.max_queued && t.pending + t.running >= t.max_queued ? "error" : "" }, limit(t.pending + t.running, t.max_queued)),
    el("td", {}, el("a", { href: "#/jobs?tenant=" + encodeURIComponent(t.name) }, "jobs"))));
  const rows = (lanes.lanes || []).map((l) => el("tr", {},
    el("td", {}, l.name),
    el("td", {}, l.paused ? el("span", { class: "badge paused", title: l.pause_note || "" }, "paused") : "active"),
    el("td", {}, l.weight), el("td", {}, l.dominant_share.toFixed(3)),
    el("td", {}, l.queued), el("td", {}, l.pending), el("td", {}, l.running),
    el("td", {}, l.paused
      ? confirmButton("Resume", async () => { await api("/lanes/" + encodeURIComponent(l.name) + "/resume", { method: "POST", body: {} }); route(); })
      : confirmButton("Pause", async () => { await api("/lanes/" + encodeURIComponent(l.name) + "/pause", { method: "POST", body: { note: "paused from the UI" } }); route(); }, true))));
  const cap = lanes.capacity || {};
  show(el("h1", {}, "Overview"),
    el("div", { class: "card" }, el("h2", {}, "Lanes"),
      el("p", { class: "muted" }, "The lane with the smallest weighted dominant share goes next. A paused lane leases nothing; its running jobs finish."),
      table(["Lane", "State", "Weight", "Share", "Queued", "Pending", "Running", ""], rows),
      el("p", { class: "muted" }, `Capacity: ${cap.slots || 0} slots, ${cap.cpu || 0} cpu, ${cap.memory_mb || 0} MB, ${cap.gpu || 0} gpu`)),
    el("div", { class: "card", id: "tenants" }, el("h2", {}, "Tenants"),
      el("p", { class: "muted" }, "Running jobs against max_running, unfinished jobs against max_queued (no limit when none is shown)."),
      table(["Tenant", "Running", "Unfinished", ""], tenantRows)),
    activityCharts(series));
}

async function jobs(params) {
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
  el("label", { class: "muted" }, "before ", el("input", { type: "datetime-local", name: "created_before_local", value: localValue(params.created_before), "aria-label": "created before" })),
  el("button", { type: "submit" }, "Filter"));
  const jump = el("form", { class: "filters", onsubmit: (ev) => {
    ev.preventDefault();
    const id = new FormData(ev.target).get("id").trim();
    if (id) location.hash = "#/job/" + encodeURIComponent(id);
  } }, el("input", { name: "id", placeholder: "job id", "aria-label": "job id", size: 30 }), el("button", { type: "submit" }, "Open job"));
  const selected = new Set();
  const rows = (page.jobs || []).map((j) => el("tr", {},
    el("td", {}, el("input", { type: "checkbox", "aria-label": "select " + j.id, "data-id": j.id,
      onchange: (ev) => { if (ev.target.checked) selected.add(j.id); else selected.delete(j.id); } })),
    el("td", {}, el("a", { href: "#/job/" + j.id }, j.id)),
    el("td", {}, j.type), el("td", {}, j.tenant), el("td", {}, j.lane), el("td", {}, j.priority),
    el("td", {}, stateText(j.state)), el("td", {}, j.reason || ""), el("td", {}, when(j.created_at)),
    el("td", {}, jobActions(j, () => route()))));
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
    el("div", { class: "card" }, table(["", "ID", "Type", "Tenant", "Lane", "Priority", "State", "Reason", "Created", ""], rows),
      rows.length ? null : el("p", { class: "muted" }, "No job matches."), more, rows.length ? bulk : null),
    el("div", { class: "card" }, el("h2", {}, "Bulk retry"), retryMatching));
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

// reservationText says where a reservation holds capacity and until when.
function reservationText(x) {
  const r = x.reservation;
  const who = r.job_id === x.job_id ? "" : "job " + r.job_id + "'s, ";
  const by = r.starts_by ? "starts by " + when(r.starts_by) : "start unknown";
  return `${who}on worker ${r.worker_id}, ${by}, after ${(r.waits_for || []).join(", ")} end`;
}

async function jobDetail(id) {
  const enc = encodeURIComponent(id);
  const [jr, evs, execs] = await Promise.all([api("/jobs/" + enc), api("/jobs/" + enc + "/events"), api("/jobs/" + enc + "/executions")]);
  const j = jr.job;
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
          x.estimated_start ? [el("dt", {}, "estimated start"), el("dd", {}, when(x.estimated_start))] : null,
          x.estimate_note ? [el("dt", {}, "estimate"), el("dd", {}, x.estimate_note)] : null));
    } catch (e) { explain = null; }
  }
  const logs = el("pre", { class: "logs", id: "logs" });
  show(el("h1", {}, "Job " + j.id),
    el("div", { class: "card" }, el("dl", { class: "kv" },
      el("dt", {}, "state"), el("dd", {}, stateText(j.state), j.held ? " (held)" : ""),
      el("dt", {}, "type"), el("dd", {}, j.type),
      el("dt", {}, "tenant / lane"), el("dd", {}, j.tenant + " / " + j.lane),
      el("dt", {}, "priority"), el("dd", {}, j.priority),
      el("dt", {}, "attempt"), el("dd", {}, `${j.attempt} of ${j.max_attempts || "-"}`),
      el("dt", {}, "created"), el("dd", {}, when(j.created_at)),
      j.last_error ? [el("dt", {}, "last error"), el("dd", { class: "error" }, j.last_error)] : null),
    el("p", {}, jobActions(j, () => route())), jobTuning(j)),
    explain,
    el("div", { class: "card" }, el("h2", {}, "Logs"), logs),
    el("div", { class: "card" }, el("h2", {}, "Attempts"), table(["Attempt", "Worker", "Started", "Finished", "Outcome", "Class", "Exit"],
      (execs.executions || []).map((e) => el("tr", {}, el("td", {}, e.attempt), el("td", {}, e.worker_id || "-"), el("td", {}, when(e.started_at)),
        el("td", {}, when(e.finished_at)), el("td", {}, e.outcome || "-"), el("td", {}, e.failure_class || "-"), el("td", {}, e.exit_code ?? "-"))))),
    el("div", { class: "card" }, el("h2", {}, "Timeline"), table(["At", "Event", "Attempt", "Actor", "Detail"],
      (evs.events || []).map((e) => el("tr", {}, el("td", {}, when(e.at)), el("td", {}, e.type), el("td", {}, e.attempt || "-"),
        el("td", {}, e.actor || "-"), el("td", { class: "wrap" }, e.detail ? JSON.stringify(e.detail) : ""))))));
  followLogs(id, logs);
}

// followLogs streams the job's output (Server-Sent Events read with fetch,
// which can send the bearer token), stdout and stderr told apart.
async function followLogs(id, pre) {
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
          pre.append(el("span", { class: c.stream }, c.data));
        } else if (event === "end") {
          pre.append(el("span", { class: "muted" }, `\n— ended: ${JSON.parse(data).state}\n`));
        }
      }
    }
  } catch (e) {
    if (e.name !== "AbortError") pre.append(el("span", { class: "error" }, "\n(" + e.message + ")"));
  }
}

async function schedules() {
  const list = await api("/schedules");
  const rows = (list.schedules || []).map((s) => el("tr", {},
    el("td", {}, el("a", { href: "#/schedule/" + s.id }, s.name || s.id)), el("td", {}, s.tenant), el("td", {}, s.spec), el("td", {}, s.timezone),
    el("td", {}, s.paused ? el("span", { class: "badge paused", title: s.note || "" }, "paused") : "active",
      s.last_failure ? el("span", { class: "badge error", title: s.last_failure.error }, "failing") : null),
    el("td", {}, s.next_run_at ? new Date(s.next_run_at).toLocaleString(undefined, { timeZone: s.timezone }) : "-"),
    el("td", {}, when(s.last_run_at)),
    el("td", {}, el("span", { class: "actions" },
      s.paused
        ? confirmButton("Resume", async () => { await api("/schedules/" + encodeURIComponent(s.id) + "/resume", { method: "POST", body: {} }); route(); })
        : confirmButton("Pause", async () => { await api("/schedules/" + encodeURIComponent(s.id) + "/pause", { method: "POST", body: { note: "paused from the UI" } }); route(); }, true),
      confirmButton("Trigger", async () => { await api("/schedules/" + encodeURIComponent(s.id) + "/trigger", { method: "POST", body: {} }); route(); }),
      el("a", { href: "#/jobs?schedule_id=" + encodeURIComponent(s.id) }, "runs")))));
  show(el("h1", {}, "Schedules"), el("div", { class: "card" },
    table(["Schedule", "Tenant", "Spec", "Zone", "State", "Next run (its zone)", "Last run", ""], rows),
    rows.length ? null : el("p", { class: "muted" }, "No schedule.")));
}

async function scheduleDetail(id) {
  const s = await api("/schedules/" + encodeURIComponent(id));
  const inZone = (t) => t ? new Date(t).toLocaleString(undefined, { timeZone: s.timezone }) : "-";
  show(el("h1", {}, "Schedule " + (s.name || s.id)),
    el("div", { class: "card" }, el("dl", { class: "kv" },
      el("dt", {}, "spec"), el("dd", {}, s.spec + " (" + s.timezone + ")"),
      el("dt", {}, "state"), el("dd", {}, s.paused ? "paused" + (s.note ? ": " + s.note : "") : "active"),
      s.last_failure ? el("dt", {}, "failing") : null,
      s.last_failure ? el("dd", { class: "error" }, "the slot at " + inZone(s.last_failure.scheduled_for) + " (" + s.timezone + ") created no job: " + s.last_failure.error) : null,
      el("dt", {}, "overlap"), el("dd", {}, s.overlap),
      el("dt", {}, "job type"), el("dd", {}, s.template.type))),
    el("div", { class: "card" }, el("h2", {}, "Next runs (its zone)"),
      el("ul", {}, (s.upcoming || []).map((t) => el("li", {}, inZone(t))))),
    el("div", { class: "card" }, el("h2", {}, "Recent runs"), table(["Slot", "Job", "State", "Started", "Lag"],
      (s.recent || []).map((r) => el("tr", {}, el("td", {}, inZone(r.scheduled_for)), el("td", {}, el("a", { href: "#/job/" + r.job_id }, r.job_id)),
        el("td", {}, stateText(r.state)), el("td", {}, when(r.started_at)), el("td", {}, r.lag_ms === undefined ? "-" : r.lag_ms + " ms"))))));
}

async function workers() {
  const [list, running, leased] = await Promise.all([api("/workers"), api("/jobs?state=running&limit=1000"), api("/jobs?state=leased&limit=1000")]);
  const byWorker = {};
  for (const j of [...(running.jobs || []), ...(leased.jobs || [])]) (byWorker[j.worker_id] = byWorker[j.worker_id] || []).push(j);
  const rows = (list.workers || []).map((w) => el("tr", {},
    el("td", {}, w.name || w.id), el("td", {}, w.state), el("td", {}, `${w.running} / ${w.slots}`),
    el("td", { class: "wrap" }, (byWorker[w.id] || []).map((j) => el("a", { href: "#/job/" + j.id, class: "joblink" }, j.type + " " + j.id.slice(-6)))),
    el("td", {}, `${w.cpu || 0} cpu, ${w.memory_mb || 0} MB, ${w.gpu || 0} gpu`),
    el("td", {}, (w.types || ["*"]).join(", ")), el("td", {}, (w.labels || []).join(", ") || "-"), el("td", {}, when(w.last_seen_at))));
  show(el("h1", {}, "Workers"), el("div", { class: "card" },
    table(["Worker", "State", "Running / slots", "Current jobs", "Resources", "Types", "Labels", "Last heartbeat"], rows),
    rows.length ? null : el("p", { class: "muted" }, "No worker is registered.")));
}

// ---------- routing ----------

async function route() {
  if (followAbort) { followAbort.abort(); followAbort = null; }
  const hash = location.hash.slice(1) || "/";
  const [path, query] = hash.split("?");
  for (const a of document.querySelectorAll("nav a")) {
    const target = a.getAttribute("href").slice(1);
    a.classList.toggle("active", target === "/" ? path === "/" : path.startsWith(target) || path.startsWith(target.replace(/s$/, "/")));
  }
  const open = await fetch("/api/v1/lanes", { headers: sessionStorage.getItem(keyName) ? { Authorization: "Bearer " + sessionStorage.getItem(keyName) } : {} });
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
    if (e.status === 401) return;
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
