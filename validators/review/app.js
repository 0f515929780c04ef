// The labelling page: one item at a time; every label is POSTed and saved (fsync) before we move on.
// All item text is set with textContent, never parsed as HTML: tool descriptions are untrusted web text.
"use strict";

const LABEL_NAMES = { match: "match", no_match: "no match", unsure: "unsure" };
const KEYS = { m: "match", "1": "match", n: "no_match", "2": "no_match", u: "unsure", "3": "unsure" };
let items = [];
let labels = {};
let index = 0;
let busy = false;
let ignored = 0; // key presses that arrived while a save was in flight

function shorten(text, n) { return text.length > n ? text.slice(0, n - 1) + "…" : text; }

function renderContext(item) {
  const ctx = item.context || {};
  $("tool-id").textContent = item.tool_id;
  const link = $("doc-link");
  if (ctx.doc_url) { link.href = ctx.doc_url; link.hidden = false; link.textContent = "documentation"; }
  else { link.removeAttribute("href"); link.hidden = true; }
  $("tags").textContent = ctx.tags && ctx.tags.length ? `tags: ${ctx.tags.join(", ")}` : "";
  const list = $("arguments");
  list.replaceChildren();
  for (const a of ctx.arguments || []) {
    const li = document.createElement("li");
    const name = document.createElement("code");
    name.textContent = a.name;
    li.append(name);
    const extra = [a.type, a.required ? "required" : null].filter(Boolean).join(", ");
    li.append(document.createTextNode((extra ? ` (${extra})` : "") + (a.description ? `: ${a.description}` : "")));
    list.append(li);
  }
  const more = (ctx.arguments_total || 0) - (ctx.arguments || []).length;
  if (more > 0) {
    const li = document.createElement("li");
    li.textContent = `… and ${more} more`;
    list.append(li);
  }
  $("arguments-box").hidden = !(ctx.arguments || []).length;
  $("siblings").textContent = ctx.group
    ? `Part of ${ctx.group} with ${ctx.siblings_total} other tool(s)` +
      (ctx.siblings.length ? `: ${ctx.siblings.join("; ")}` + (ctx.siblings_total > ctx.siblings.length ? "; …" : "") : "")
    : "";
}

function $(id) { return document.getElementById(id); }

function firstUnlabeled(from) {
  for (let k = 0; k < items.length; k++) {
    const i = (from + k) % items.length;
    if (!(items[i].item_id in labels)) return i;
  }
  return -1;
}

function render() {
  const done = Object.keys(labels).length;
  $("progress").max = items.length;
  $("progress").value = done;
  $("progress-text").textContent = `${done} of ${items.length} labelled` + (done === items.length ? " — all done, thank you" : "");
  const item = items[index];
  document.body.dataset.itemId = item.item_id;
  $("position").textContent = `Item ${index + 1} of ${items.length}`;
  $("query").textContent = item.query;
  $("tool-name").textContent = item.tool_name;
  $("tool-description").textContent = item.tool_description;
  $("platform").textContent = `(${item.platform})`;
  renderContext(item);
  const current = labels[item.item_id];
  $("current-label").textContent = current ? LABEL_NAMES[current] : "none";
  for (const b of document.querySelectorAll(".buttons button")) {
    b.classList.toggle("chosen", b.dataset.label === current);
  }
}

function status(text, error) {
  window.__statusLog = (window.__statusLog || []).concat(text ? [text] : []); // read by the page tests
  $("status").textContent = text;
  $("status").classList.toggle("error", !!error);
}

async function give(label) {
  if (!items.length) return;
  if (busy) {
    // a second press while the first is saving would land on an item the labeller has not seen yet:
    // it is not applied, and the page says so
    ignored += 1;
    status(`still saving item ${index + 1}: key ignored (${ignored}), press again once the next item shows`, true);
    return;
  }
  busy = true;
  ignored = 0;
  const at = index;
  const item = items[at];
  status(`saving item ${at + 1}…`);
  try {
    const resp = await fetch("/api/label", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ item_id: item.item_id, label: label }),
    });
    const data = await resp.json();
    if (!resp.ok) throw new Error(data.error || resp.statusText);
    labels[item.item_id] = label;
    // the confirmation names the item it belongs to, not the one shown next
    $("last-saved").textContent = `Saved item ${at + 1} as ${LABEL_NAMES[label]}: “${shorten(item.query, 80)}” → ${item.tool_name}`;
    document.body.dataset.lastSaved = item.item_id;
    status("");
    const next = firstUnlabeled(index + 1);
    if (next !== -1) index = next;
    else if (index < items.length - 1) index += 1;
    render();
  } catch (err) {
    status(`not saved: ${err.message}`, true);
  } finally {
    busy = false;
  }
}

function move(step) {
  index = Math.min(items.length - 1, Math.max(0, index + step));
  status("");
  render();
}

async function load() {
  const resp = await fetch("/api/state");
  const data = await resp.json();
  items = data.items;
  labels = data.labels;
  const start = firstUnlabeled(0);
  index = start === -1 ? 0 : start; // resume at the first unlabelled item
  render();
  document.body.dataset.ready = "1";
}

document.addEventListener("DOMContentLoaded", () => {
  for (const b of document.querySelectorAll(".buttons button")) {
    b.addEventListener("click", () => give(b.dataset.label));
  }
  $("btn-prev").addEventListener("click", () => move(-1));
  $("btn-next").addEventListener("click", () => move(1));
  $("btn-next-unlabeled").addEventListener("click", () => {
    const next = firstUnlabeled(index + 1);
    if (next !== -1) { index = next; render(); }
  });
  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key in KEYS) { e.preventDefault(); give(KEYS[e.key]); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); move(-1); }
    else if (e.key === "ArrowRight") { e.preventDefault(); move(1); }
  });
  load().catch((err) => status(`could not load the sample: ${err.message}`, true));
});
