// The labelling page: one item at a time; every label is POSTed and saved (fsync) before we move on.
// All item text is set with textContent, never parsed as HTML: tool descriptions are untrusted web text.
"use strict";

const LABEL_NAMES = { match: "match", no_match: "no match", unsure: "unsure" };
const KEYS = { m: "match", "1": "match", n: "no_match", "2": "no_match", u: "unsure", "3": "unsure" };
let items = [];
let labels = {};
let index = 0;
let busy = false;

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
  const current = labels[item.item_id];
  $("current-label").textContent = current ? LABEL_NAMES[current] : "none";
  for (const b of document.querySelectorAll(".buttons button")) {
    b.classList.toggle("chosen", b.dataset.label === current);
  }
}

function status(text, error) {
  $("status").textContent = text;
  $("status").classList.toggle("error", !!error);
}

async function give(label) {
  if (busy || !items.length) return;
  busy = true;
  const item = items[index];
  try {
    const resp = await fetch("/api/label", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ item_id: item.item_id, label: label }),
    });
    const data = await resp.json();
    if (!resp.ok) throw new Error(data.error || resp.statusText);
    labels[item.item_id] = label;
    status(`saved: ${LABEL_NAMES[label]}`);
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
