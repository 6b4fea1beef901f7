// tfrx view: the records table, panels and detail view. Plain JS, no build step.
"use strict";

const PAGE = 25;
const state = { start: 0, next: 0, filter: "", history: [], labels: {} };
const $ = (sel) => document.querySelector(sel);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

// This launch's token: in the address tfrx view opened (?token=...), kept for the tab's life and sent with
// every API call (a header; a query parameter only where the browser fetches by itself: images, downloads).
const TOKEN = (() => {
  const url = new URL(window.location.href);
  const given = url.searchParams.get("token");
  if (given) {
    sessionStorage.setItem("tfrx-token", given);
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
  }
  return given || sessionStorage.getItem("tfrx-token") || "";
})();

async function api(path, post) {
  const init = { headers: { "X-Tfrx-Token": TOKEN } };
  if (post !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(post);
  }
  const r = await fetch(path, init);
  let body;
  try { body = await r.json(); } catch (e) { throw new Error(`${r.status} ${r.statusText}`); }
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

function withToken(url) {
  return `${url}${url.includes("?") ? "&" : "?"}token=${encodeURIComponent(TOKEN)}`;
}

function setStatus(text, error) {
  const s = $("#status");
  s.textContent = text;
  s.className = error ? "error" : "";
}

function fmtNum(v) {
  if (typeof v === "number" && !Number.isInteger(v)) return Number(v.toPrecision(6)).toString();
  return String(v);
}

function spark(values) {
  const w = 96, h = 18;
  const pts = values.map((v, i) => `${(i / Math.max(1, values.length - 1)) * w},${h - v * h}`).join(" ");
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("width", w); svg.setAttribute("height", h); svg.setAttribute("class", "spark");
  const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
  line.setAttribute("points", pts); line.setAttribute("fill", "none"); line.setAttribute("stroke", "#3b6fd6");
  svg.append(line);
  return svg;
}

function boxesSvg(boxes) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 1 1"); svg.setAttribute("preserveAspectRatio", "none");
  for (const b of boxes) {
    const r = document.createElementNS("http://www.w3.org/2000/svg", "rect");
    r.setAttribute("x", b.xmin); r.setAttribute("y", b.ymin);
    r.setAttribute("width", Math.max(0, b.xmax - b.xmin)); r.setAttribute("height", Math.max(0, b.ymax - b.ymin));
    r.setAttribute("class", "box");
    if (b.label) { const t = document.createElementNS("http://www.w3.org/2000/svg", "title"); t.textContent = b.label; r.append(t); }
    svg.append(r);
  }
  return svg;
}

function mediaUrl(n, feature, j) {
  return withToken(`/api/media?n=${n}&feature=${encodeURIComponent(feature)}&j=${j}`);
}

function cell(c, rec, name, big) {
  if (!c) return el("span", { class: "dim" }, "-");
  switch (c.t) {
    case "empty": return el("span", { class: "dim" }, "(no kind)");
    case "num": {
      const names = state.labels[name];  // a TFDS ClassLabel: the class names beside the numbers
      const show = (v) => fmtNum(v) + (names && Number.isInteger(v) && names[v] !== undefined ? ` ${names[v]}` : "");
      return el("span", { class: "num" }, c.v.length === 1 ? show(c.v[0]) : "[" + c.v.map(show).join(", ") + "]");
    }
    case "numlist": {
      const s = el("span", { class: "num", title: `${c.n} values, min ${fmtNum(c.min)}, max ${fmtNum(c.max)}, mean ${fmtNum(c.mean)}` });
      if (c.histogram) s.append(`histogram, ${c.n} buckets `, spark(c.spark));
      else s.append(`${c.n} × ${c.kind} `, spark(c.spark), ` [${fmtNum(c.min)}, ${fmtNum(c.max)}]`);
      return s;
    }
    case "bytes_list": {
      const wrap = el("span", {});
      if (c.n === 0) wrap.append(el("span", { class: "dim" }, "[]"));
      c.items.forEach((it, k) => {
        if (k) wrap.append(" ");
        if ((it.t === "image" || it.t === "raw_image") && rec) {
          const box = el("span", { class: big ? "big" : "thumb" });
          box.append(el("img", { src: mediaUrl(rec.n, name, it.j), loading: "lazy", alt: name,
            class: it.colormap ? "media colormap" : "media", title: it.colormap ? "depth / float values through a colour map" : name }));
          const masks = (rec.features || {})["image/object/mask"];
          if (big && k === 0 && name !== "image/object/mask" && masks && masks.items) {
            // The Object Detection API's instance masks (one PNG a box) laid over the image.
            for (const m of masks.items.filter((x) => x.t === "image" || x.t === "raw_image")) {
              box.append(el("img", { class: "mask", src: mediaUrl(rec.n, "image/object/mask", m.j), alt: "mask" }));
            }
          }
          if (rec.boxes && rec.boxes.length && k === 0 && name !== "image/object/mask" && !it.colormap) {
            box.append(boxesSvg(rec.boxes));
            for (const b of rec.boxes) {
              if (b.label) box.append(el("span", { class: "box-label", style: `left:${100 * b.xmin}%;top:${100 * b.ymin}%` }, b.label));
            }
          }
          wrap.append(box);
        } else if (it.t === "audio" && rec) {
          wrap.append(el("audio", { controls: "", preload: "none", src: mediaUrl(rec.n, name, it.j) }));
        } else if (it.t === "text") {
          wrap.append(el("span", { class: "text" }, it.v + (it.cut ? "…" : "")));
        } else if (it.t === "bytes") {
          wrap.append(el("span", { class: "bytes", title: `${it.bytes} bytes` }, `0x${it.hex}${it.bytes > 32 ? "…" : ""}`));
        } else {
          wrap.append(el("span", { class: "dim" }, `${it.t} (${it.bytes} bytes)`));
        }
      });
      if (c.n > c.items.length) wrap.append(el("span", { class: "dim" }, ` +${c.n - c.items.length} more`));
      return wrap;
    }
    default: return el("span", { class: "dim" }, c.t);
  }
}

function damageRow(d, span) {
  const name = d.path.split("/").pop();
  const where = d.start !== null && d.start !== undefined ? `bytes ${d.start.toLocaleString()}–${d.end.toLocaleString()} of ${name} skipped (${(d.end - d.start).toLocaleString()} bytes)` : name;
  const total = state.total === undefined ? Infinity : state.total;
  const place = d.before === 0 ? "before record 0" : (d.before >= total ? `after record ${d.before - 1}` : `between records ${d.before - 1} and ${d.before}`);
  return el("tr", { class: "damage-gap" }, el("td", { colspan: span, title: d.path }, `⚠ damage ${place}: ${d.message}; ${where}`));
}

function renderRows(records, damage) {
  const names = [];
  let lists = false;
  for (const r of records) {
    for (const k of Object.keys(r.features || {})) if (!names.includes(k)) names.push(k);
    if (r.feature_lists) lists = true;
  }
  const head = el("tr", {}, el("th", {}, "#"));
  for (const k of names) head.append(el("th", {}, k));
  if (lists) head.append(el("th", {}, "feature lists"));
  if (records.some((r) => r.kind === "other")) head.append(el("th", {}, "payload"));
  $("#table thead").replaceChildren(head);
  const body = $("#table tbody");
  body.replaceChildren();
  const span = 1 + names.length + (lists ? 1 : 0) + (records.some((r) => r.kind === "other") ? 1 : 0);
  const gaps = [...(damage || [])];
  for (const r of records) {
    while (gaps.length && gaps[0].before <= r.n) body.append(damageRow(gaps.shift(), span));
    const tr = el("tr", { "data-n": r.n, onclick: () => showDetail(r.n) }, el("td", { class: "n", title: `${r.shard} record ${r.i}` }, r.n));
    for (const k of names) tr.append(el("td", {}, cell((r.features || {})[k], r, k, false)));
    if (lists) {
      const fl = r.feature_lists || {};
      tr.append(el("td", {}, Object.entries(fl).map(([k, v]) => `${k}: ${v.steps} steps`).join("; ")));
    }
    if (r.kind === "other") tr.append(el("td", { class: "other" }, r.message));
    body.append(tr);
  }
  for (const d of gaps) body.append(damageRow(d, span));
}

async function showDetail(n) {
  const box = $("#detail");
  box.hidden = false;
  box.replaceChildren(el("p", {}, `record ${n}...`));
  try {
    const r = await api(`/api/record?n=${n}`);
    const parts = [el("h3", { title: r.shard }, `record ${r.n} — ${r.kind}, ${r.size} bytes (${r.shard.split("/").pop()}, record ${r.i})`)];
    if (r.kind === "other") {
      parts.push(el("p", { class: "other" }, r.message), el("pre", { class: "bytes" }, r.hex.match(/.{1,64}/g).join("\n")));
    } else {
      const t = el("table", {});
      for (const [k, c] of Object.entries(r.features)) t.append(el("tr", {}, el("th", {}, k), el("td", {}, cell(c, r, k, true))));
      parts.push(t);
      if (r.boxes && r.boxes.length) parts.push(el("p", {}, `${r.boxes.length} boxes: ` + r.boxes.map((b) => b.label || "?").join(", ")));
      if (r.feature_lists) {
        const tl = el("table", { class: "timeline" });
        for (const [k, v] of Object.entries(r.feature_lists)) {
          const row = el("tr", {}, el("th", {}, `${k} (${v.steps})`));
          v.cells.forEach((c) => row.append(el("td", {}, cell(c, null, k, false))));
          if (v.steps > v.cells.length) row.append(el("td", { class: "dim" }, `+${v.steps - v.cells.length}`));
          tl.append(row);
        }
        parts.push(el("h4", {}, "feature lists, step by step"), tl);
      }
    }
    box.replaceChildren(...parts);
  } catch (e) {
    box.replaceChildren(el("p", { class: "error" }, e.message));
  }
}

async function loadPage(start) {
  setStatus("loading...");
  const q = new URLSearchParams({ start, count: PAGE });
  if (state.filter) q.set("filter", state.filter);
  try {
    const page = await api(`/api/records?${q}`);
    state.start = start; state.next = page.next; state.total = page.total;
    renderRows(page.records, page.damage);
    const shown = page.records.length ? `${page.records[0].n}–${page.records[page.records.length - 1].n}` : "none";
    setStatus(state.filter
      ? `${page.records.length} matches (records ${shown}), scanned ${page.scanned} of ${page.total}`
      : `records ${shown} of ${page.total}`);
    $("#jump").value = start;
    updateExport();
  } catch (e) {
    setStatus(e.message, true);
  }
}

function updateExport() {
  $("#export-what").textContent = state.filter ? "the matching records" : "every record";
}

function setExport(text, cls) {
  const s = $("#export-status");
  s.className = cls || "";
  s.replaceChildren(...(Array.isArray(text) ? text : [text]));
}

async function startExport(fmt) {
  const body = { format: fmt };
  if (state.filter) body.filter = state.filter;
  try {
    const job = await api("/api/export", body);
    $("#export-cancel").hidden = false;
    showExport(job);
    pollExport();
  } catch (e) {
    setExport(e.message, "error");
  }
}

function showExport(job) {
  if (job.status === "running") {
    const pct = job.total ? Math.floor((100 * job.scanned) / job.total) : 0;
    setExport([el("progress", { max: 100, value: pct }), ` ${job.format}: scanned ${job.scanned.toLocaleString()} of ${job.total.toLocaleString()} records, ${job.written.toLocaleString()} written (${fmtBytes(job.bytes)})`]);
  } else if (job.status === "done") {
    $("#export-cancel").hidden = true;
    const link = el("a", { href: withToken("/api/export/file"), download: job.name, id: "export-file" }, `download ${job.name}`);
    setExport([`${job.written.toLocaleString()} records exported as ${job.format} (${fmtBytes(job.bytes)}, ${job.seconds} s): `, link], "done");
  } else if (job.status === "failed" || job.status === "cancelled") {
    $("#export-cancel").hidden = true;
    setExport(job.status === "failed" ? `export failed: ${job.error}` : "export cancelled", job.status === "failed" ? "error" : "");
  }
}

async function pollExport() {
  clearTimeout(state.exportPoll);
  try {
    const job = await api("/api/export");
    showExport(job);
    if (job.status === "running") state.exportPoll = setTimeout(pollExport, 200);
  } catch (e) {
    setExport(e.message, "error");
  }
}

function fmtBytes(n) {
  if (n === null || n === undefined) return "?";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

async function loadInfo() {
  try {
    if (!TOKEN) throw new Error("this page needs the address tfrx view printed: it carries the launch's token (…/?token=…)");
    let info = await api("/api/info");
    while (info.status === "indexing") {
      $("#summary").textContent = `building the record index: ${info.message}`;
      setStatus(`building the record index: ${info.message}`);
      await new Promise((r) => setTimeout(r, 250));
      info = await api("/api/info");
    }
    showInfo(info);
    return info;
  } catch (e) {
    $("#summary").textContent = e.message;
    setStatus(e.message, true);
  }
}

function showInfo(info) {
  {
    const damaged = info.shards.filter((s) => s.error).length;
    if (info.stats_records) $("#stats-records").value = info.stats_records;
    state.labels = info.labels || {};
    state.records = info.records !== false;
    if (info.overview) $("#overview-records").value = info.overview.records;
    $("#summary").textContent = `${info.shards.length} file(s), ${info.total.toLocaleString()} records, ` +
      `${fmtBytes(info.shards.reduce((a, s) => a + (s.size || 0), 0))}, ${info.payload.join(", ") || "empty"}` +
      (damaged ? `, ${damaged} damaged` : "");
    $("#schema-code").textContent = info.schema || (info.payload.includes("other") ? "# not tf.train.Example records: no spec" : "# no records");
    const t = $("#shard-table");
    t.replaceChildren(el("thead", {}, el("tr", {}, ...["file", "compression", "bytes", "records", "problem"].map((x) => el("th", {}, x)))));
    const tb = el("tbody", {});
    for (const s of info.shards) tb.append(el("tr", {}, el("td", {}, s.path), el("td", {}, s.compression), el("td", { class: "num" }, s.size ?? "?"), el("td", { class: "num" }, s.count ?? "?"), el("td", { class: "error" }, s.error || "")));
    t.append(tb);
  }
}

async function poll(path, render, target) {
  try {
    const s = await api(path);
    if (s.status === "done") return render(s.result);
    if (s.status === "failed") { target.replaceChildren(el("p", { class: "error" }, s.error)); return; }
    if (s.status === "cancelled") return;
    const of = s.target ? ` of ${s.target.toLocaleString()}` : (s.size ? ` of ${s.size.toLocaleString()}` : "");
    target.replaceChildren(el("p", { class: "progress" }, `working... ${s.progress.toLocaleString()}${of} records`));
    state.polling = setTimeout(() => poll(path, render, target), 250);
  } catch (e) {
    target.replaceChildren(el("p", { class: "error" }, e.message));
  }
}

function histogram(h, title) {
  const w = 120, hgt = 24;
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("width", w); svg.setAttribute("height", hgt); svg.setAttribute("class", "hist");
  if (!h || !h.counts.length) return svg;
  const top = Math.max(...h.counts, 1), bw = w / h.counts.length;
  h.counts.forEach((c, i) => {
    const r = document.createElementNS("http://www.w3.org/2000/svg", "rect");
    const bh = (c / top) * hgt;
    r.setAttribute("x", i * bw); r.setAttribute("y", hgt - bh); r.setAttribute("width", Math.max(1, bw - 1)); r.setAttribute("height", bh);
    const t = document.createElementNS("http://www.w3.org/2000/svg", "title");
    t.textContent = `${title} [${fmtNum(h.edges[i])}, ${fmtNum(h.edges[i + 1])}): ${c}`;
    r.append(t);
    svg.append(r);
  });
  return svg;
}

function renderStats(s) {
  const t = el("table", { id: "stats-table" }, el("tr", {}, ...["feature", "present", "kinds", "values per record", "lengths", "min", "max", "mean", "values", "top values"].map((h) => el("th", {}, h))));
  const rows = [...(s.features || []), ...(s.feature_lists || []).map((f) => ({ ...f, name: f.name + " (list)" }))];
  for (const f of rows) {
    const v = f.values || {};
    const nv = f.num_values ? `${f.num_values.min}–${f.num_values.max} (mean ${fmtNum(f.num_values.mean)})` : "";
    const steps = f.steps ? `; ${f.steps.min}–${f.steps.max} steps` : "";
    const top = (f.top || []).map((x) => `${x[0]} ×${x[1]}`).join("; ");
    const pct = s.records ? (100 * f.present) / s.records : 0;
    t.append(el("tr", { "data-feature": f.name }, el("td", {}, f.name),
      el("td", { title: `${pct.toFixed(1)}% of records` }, el("span", { class: "bar", style: `width:${pct * 0.6}px` }), ` ${f.present}`),
      el("td", {}, f.kind || ""), el("td", {}, nv + steps), el("td", {}, histogram(f.num_values && f.num_values.histogram, "values per record")),
      el("td", { class: "num" }, v.min !== undefined && v.min !== null ? fmtNum(v.min) : ""),
      el("td", { class: "num" }, v.max !== undefined && v.max !== null ? fmtNum(v.max) : ""),
      el("td", { class: "num" }, v.mean !== undefined && v.mean !== null ? fmtNum(v.mean) : ""),
      el("td", {}, histogram(v.histogram, "values")), el("td", {}, top + (f.long_values ? ` (${f.long_values} values over 64 bytes not counted)` : ""))));
  }
  const how = s.mode === "all" ? "every record" : "a random sample";
  $("#stats-body").replaceChildren(el("p", {}, `${s.records.toLocaleString()} records read (${how}) of ${s.total.toLocaleString()}` +
    (s.unreadable ? `; ${s.unreadable} could not be read` : "")), t);
}

function loadStats() {
  clearTimeout(state.polling);
  const q = new URLSearchParams({ mode: $("#stats-mode").value, records: $("#stats-records").value || "10000" });
  api(`/api/stats?${q}`, {}).then(() => poll(`/api/stats?${q}`, renderStats, $("#stats-body")))
    .catch((e) => $("#stats-body").replaceChildren(el("p", { class: "error" }, e.message)));
}

function renderHealth(h) {
  const count = h.files.reduce((a, f) => a + f.errors.length, 0);
  const parts = [el("p", {}, h.damaged ? `${h.damaged} damaged file(s), ${count} damaged region(s); record numbers are those of the Records tab` : "every record's CRC checks out")];
  const t = el("table", { id: "health-table" }, el("thead", {}, el("tr", {}, ...["file", "records", "between records", "bytes skipped", "damage"].map((x) => el("th", {}, x)))));
  const tb = el("tbody", {});
  for (const f of h.files) {
    const name = f.path.split("/").pop();  // the full path is the cell's tooltip
    const span = f.records ? `${f.first}–${f.first + f.records - 1}` : "none";
    if (f.ok) { tb.append(el("tr", {}, el("td", { title: f.path }, name), el("td", {}, span), el("td", {}, ""), el("td", {}, ""), el("td", {}, "ok"))); continue; }
    for (const e of f.errors) {
      const between = e.before === null || e.before === undefined ? "" : (e.before === f.first ? `before ${e.before}` : (e.before === f.first + f.records ? `after ${e.before - 1}` : `${e.before - 1} and ${e.before}`));
      const bytes = e.start === null || e.start === undefined ? "" : `${e.start}–${e.end} (${(e.end - e.start).toLocaleString()})`;
      tb.append(el("tr", { class: "damage" }, el("td", { title: f.path }, name), el("td", {}, span), el("td", { class: "num" }, between),
        el("td", { class: "num" }, bytes), el("td", { class: "error" }, e.message.split(f.path).join(name))));
    }
  }
  t.append(tb);
  parts.push(t);
  $("#health-body").replaceChildren(...parts);
  if (h.damaged) loadInfo();  // a file found damaged now: the summary and the Files tab say so too
}

function activate(name) {
  document.querySelectorAll("nav button").forEach((x) => x.classList.toggle("active", x.dataset.tab === name));
  document.querySelectorAll(".tab").forEach((x) => x.classList.toggle("active", x.id === name));
  if (name === "stats") loadStats();
  if (name === "health") poll("/api/health", renderHealth, $("#health-body"));
  if (name === "overview" && !state.overviewShown) loadOverview();
}

function tabs() {
  for (const b of document.querySelectorAll("nav button")) b.addEventListener("click", () => activate(b.dataset.tab));
}

// ---------------------------------------------------------------- the overview: two datasets side by side
const SIDES = ["a", "b"];
const svgNS = "http://www.w3.org/2000/svg";

function filterName(name) {
  if (name.includes("`") || name.startsWith("##SEQUENCE##")) return null;
  return /^[A-Za-z_][A-Za-z0-9_/]*$/.test(name) ? name : "`" + name + "`";
}

// The filter that selects the records holding a value (a string, or an int the schema makes categorical).
function valueFilter(row, value) {
  const name = filterName(row.feature);
  if (!name || !state.records || value === "__BYTES_VALUE__") return null;  // TFDV's stand-in for non-UTF-8 values
  if (row.type === "INT") return /^-?[0-9]+$/.test(value) ? `${value} in ${name}` : null;
  if (row.type === "STRING" || row.type === "BYTES") return `${JSON.stringify(value)} in ${name}`;
  return null;
}

// The filter for a histogram bucket: features of one value a record (several values do not compare).
function rangeFilter(row, side, lo, hi) {
  const name = filterName(row.feature);
  if (!name || !state.records || !(side.max_num_values <= 1)) return null;
  const parts = [];
  if (typeof lo === "number") parts.push(`${name} >= ${lo}`);
  if (typeof hi === "number") parts.push(`${name} <= ${hi}`);
  return parts.length ? parts.join(" and ") : null;
}

function applyFilter(expr) {
  $("#filter").value = expr;
  state.filter = expr;
  state.history = [];
  activate("records");
  loadPage(0);
}

function clickable(node, expr) {
  if (!expr) return node;
  node.classList.add("pick");
  node.setAttribute("data-filter", expr);
  node.addEventListener("click", (e) => { e.stopPropagation(); applyFilter(expr); });
  return node;
}

function num(v) { return typeof v === "number" ? fmtNum(v) : (v === undefined || v === null ? "" : String(v)); }

function pct(part, whole) { return whole ? `${((100 * part) / whole).toFixed(1)}%` : "-"; }

function standard(side) {
  const hs = (side && side.histograms) || [];
  return hs.find((h) => h.type === "STANDARD") || hs[0] || null;
}

// Both datasets' standard histograms on one x axis, each bar's height its share of that dataset's values.
function distribution(row) {
  const w = 280, lane = 30, gap = 4;
  const svg = document.createElementNS(svgNS, "svg");
  svg.setAttribute("width", w); svg.setAttribute("height", row.sides.length * (lane + gap)); svg.setAttribute("class", "dist");
  const hists = row.sides.map(standard);
  const finite = [];
  for (const h of hists) for (const b of (h ? h.buckets : [])) for (const x of [b[0], b[1]]) if (typeof x === "number") finite.push(x);
  if (!finite.length) return svg;
  let x0 = Math.min(...finite), x1 = Math.max(...finite);
  if (x1 === x0) { x0 -= 0.5; x1 += 0.5; }
  const share = hists.map((h) => (h ? h.buckets.reduce((a, b) => a + b[2], 0) : 0));
  const top = Math.max(1e-12, ...hists.flatMap((h, k) => (h ? h.buckets.map((b) => b[2] / (share[k] || 1)) : [])));
  const xs = (v) => (typeof v === "number" ? ((v - x0) / (x1 - x0)) * (w - 2) + 1 : (v === "-inf" ? 0 : w - 3));
  hists.forEach((h, k) => {
    if (!h) return;
    for (const b of h.buckets) {
      const frac = b[2] / (share[k] || 1);
      const r = document.createElementNS(svgNS, "rect");
      const left = xs(b[0]), right = xs(b[1]);
      const bh = (frac / top) * lane;
      r.setAttribute("x", left); r.setAttribute("width", Math.max(2, right - left - 1));
      r.setAttribute("y", k * (lane + gap) + lane - bh); r.setAttribute("height", Math.max(bh, frac > 0 ? 1 : 0));
      r.setAttribute("class", `bar-${SIDES[k]}`);
      const t = document.createElementNS(svgNS, "title");
      t.textContent = `${state.overview.datasets[k].label}: [${num(b[0])}, ${num(b[1])}] ${fmtNum(b[2])} (${(100 * frac).toFixed(1)}%)`;
      r.append(t);
      svg.append(clickable(r, rangeFilter(row, row.sides[k], b[0], b[1])));
    }
  });
  return svg;
}

// The most frequent values of both datasets, each dataset's share of its values as a bar.
function topValues(row) {
  const box = el("div", { class: "topvalues" });
  const freq = row.sides.map((s) => new Map(((s && s.top_values) || []).map((t) => [t[0], t[1]])));
  const totals = row.sides.map((s) => (s && (s.tot_num_values || s.num_non_missing)) || 1);
  const values = [];
  for (const f of freq) for (const v of f.keys()) if (!values.includes(v)) values.push(v);
  values.sort((p, q) => (freq[0].get(q) || 0) / totals[0] - (freq[0].get(p) || 0) / totals[0] ||
    (freq[1] ? (freq[1].get(q) || 0) / totals[1] - (freq[1].get(p) || 0) / totals[1] : 0));
  for (const v of values.slice(0, 8)) {
    const line = el("div", { class: "tv" }, clickable(el("span", { class: "tv-value", title: v }, v), valueFilter(row, v)));
    const bars = el("span", { class: "tv-bars" });
    const shares = freq.map((f, k) => (f.get(v) || 0) / totals[k]);
    freq.forEach((f, k) => {
      bars.append(el("span", { class: `tv-bar bar-${SIDES[k]}`, style: `width:${Math.max(shares[k] > 0 ? 1 : 0, shares[k] * 90)}px`,
        title: `${state.overview.datasets[k].label}: ${f.get(v) || 0} (${(100 * shares[k]).toFixed(1)}%)` }));
    });
    line.append(bars, el("span", { class: "dim" }, shares.map((x) => `${(100 * x).toFixed(1)}%`).join(" · ")));
    box.append(line);
  }
  if (values.length > 8) box.append(el("div", { class: "dim" }, `+${values.length - 8} more values`));
  return box;
}

function sideFacts(row, side, k, examples) {
  const mark = el("span", { class: `swatch bar-${SIDES[k]}` });
  if (!side) return el("div", { class: "missing" }, mark, " absent");
  const parts = [`${side.num_non_missing ?? 0} present`, `${pct(side.num_missing || 0, examples)} missing`];
  if (side.mean !== undefined) {
    parts.push(`mean ${num(side.mean)}`, `sd ${num(side.std_dev)}`, `zeros ${pct(side.num_zeros || 0, side.tot_num_values)}`,
      `min ${num(side.min)}`, `median ${num(side.median)}`, `max ${num(side.max)}`);
  } else if (side.unique !== undefined) {
    parts.push(`${side.unique} unique`, `avg length ${num(side.avg_length)}`);
  }
  if (side.max_num_values > 1 || side.min_num_values !== side.max_num_values) parts.push(`${side.min_num_values}–${side.max_num_values} values`);
  return el("div", {}, mark, " " + parts.join(", "));
}

function renderOverview(o) {
  state.overview = o;
  state.overviewShown = true;
  const legend = $("#overview-legend");
  legend.replaceChildren(...o.datasets.map((d, k) => el("span", { class: "legend" }, el("span", { class: `swatch bar-${SIDES[k]}` }),
    ` ${d.label}: ${d.num_examples.toLocaleString()} ${d.kind === "records" ? (d.sampled ? `records sampled of ${d.total.toLocaleString()}` : "records") : "examples (statistics file)"}`)));
  const parts = [];
  const what = o.anomalies_of ? `${o.anomalies_of} against the ${o.schema_source} schema` : "";
  if (o.anomalies_of) {
    parts.push(el("p", { class: o.anomalies.length ? "anomaly-summary error" : "anomaly-summary ok" },
      o.anomalies.length ? `${o.anomalies.length} feature(s) with anomalies in ${what}` : `no anomalies in ${what}`));
  }
  const heads = ["feature", "type", "per dataset", "distribution", "distance", "anomaly"];
  const t = el("table", { id: "overview-table" }, el("thead", {}, el("tr", {}, ...heads.map((h) => el("th", {}, h)))));
  const tb = el("tbody", {});
  const rows = [...o.features].sort((p, q) => (q.anomaly ? 1 : 0) - (p.anomaly ? 1 : 0) || (p.feature < q.feature ? -1 : 1));
  for (const row of rows) {
    const facts = el("td", { class: "facts" }, ...row.sides.map((s, k) => sideFacts(row, s, k, o.datasets[k].num_examples)));
    const strings = row.sides.some((s) => s && s.top_values);
    const dist = el("td", {}, strings ? topValues(row) : distribution(row));
    const dists = [];
    if (row.linf !== null) dists.push(`L∞ ${fmtNum(row.linf)}`);
    if (row.js !== null) dists.push(`JS ${fmtNum(row.js)}`);
    const a = row.anomaly;
    const anomaly = a ? el("td", { class: "anomaly-text", title: a.description }, el("b", {}, a.short_description), el("div", {}, a.description)) : el("td", {}, "");
    tb.append(el("tr", { "data-feature": row.feature, class: a ? "anomaly" : "" }, el("td", { class: "fname" }, row.feature),
      el("td", {}, row.type), facts, dist, el("td", { class: "num" }, dists.join(" ")), anomaly));
  }
  t.append(tb);
  parts.push(t);
  const schema = el("details", { id: "overview-schema" }, el("summary", {}, `schema (${o.schema_source === "given" ? "given" : `inferred from ${o.datasets[0].label}`})`), el("pre", {}, o.schema));
  parts.push(schema);
  if (state.records) parts.push(el("p", { class: "dim" }, "click a value or a bar to see the records of " + o.datasets[0].label + " that hold it"));
  $("#overview-body").replaceChildren(...parts);
}

function loadOverview() {
  clearTimeout(state.polling);
  const records = $("#overview-records").value || "100000";
  api("/api/overview", { records }).then(() => poll(`/api/overview?records=${encodeURIComponent(records)}`, renderOverview, $("#overview-body")))
    .catch((e) => $("#overview-body").replaceChildren(el("p", { class: "error" }, e.message)));
}

function wire() {
  $("#next").addEventListener("click", () => { state.history.push(state.start); loadPage(state.next); });
  $("#prev").addEventListener("click", () => loadPage(state.history.length ? state.history.pop() : Math.max(0, state.start - PAGE)));
  $("#go").addEventListener("click", () => { state.history = []; loadPage(Math.max(0, parseInt($("#jump").value || "0", 10))); });
  $("#jump").addEventListener("keydown", (e) => { if (e.key === "Enter") $("#go").click(); });
  $("#apply").addEventListener("click", () => { state.filter = $("#filter").value.trim(); state.history = []; loadPage(0); });
  $("#filter").addEventListener("keydown", (e) => { if (e.key === "Enter") $("#apply").click(); });
  $("#random").addEventListener("click", async () => {
    try {
      const page = await api(`/api/random?count=${PAGE}&seed=${Math.floor(Math.random() * 1e9)}`);
      renderRows(page.records, []);
      setStatus(`${page.records.length} random records of ${page.total}`);
    } catch (e) { setStatus(e.message, true); }
  });
  $("#stats-run").addEventListener("click", loadStats);
  $("#overview-run").addEventListener("click", loadOverview);
  for (const fmt of ["tfrecord", "parquet", "jsonl"]) {
    $(`#export-${fmt}`).addEventListener("click", (e) => { e.preventDefault(); startExport(fmt); });
  }
  $("#export-cancel").addEventListener("click", async () => {
    try { showExport(await api("/api/export/cancel", {})); } catch (e) { setExport(e.message, "error"); }
  });
}

tabs();
wire();
loadInfo().then((info) => {
  if (!info) return;
  if (!state.records) {  // a statistics file: the overview is all there is
    for (const b of document.querySelectorAll("nav button")) b.hidden = b.dataset.tab !== "overview";
    $("#summary").textContent = `statistics: ${info.overview.datasets.map((d) => d.label).join(" and ")}`;
    activate("overview");
    return;
  }
  loadPage(0);
  if (info.overview && info.overview.datasets.length > 1) activate("overview");  // --compare: the comparison first
});
