// The DAX card: a dynastore server started with --dax-port serves a DAX
// cluster endpoint beside its HTTP one (docs/dax.md). The card shows its URL,
// what its item and query caches hold and how they answered, and flushes them.
// Other endpoints (and a server without DAX) have no such route: no card.

import { admin } from "../api.js";
import { formatBytes, formatCount, h, toast } from "../ui.js";

function cacheRow(label, cache) {
  const asked = (cache.hits || 0) + (cache.misses || 0);
  const ratio = asked ? `${Math.round((100 * cache.hits) / asked)}%` : "—";
  return h("tr", { dataset: { cache: label } },
    h("th", {}, label),
    h("td", { class: "num" }, formatCount(cache.entries || 0)),
    h("td", { class: "num" }, `${formatBytes(cache.sizeBytes || 0)} of ${formatBytes(cache.maxBytes || 0)}`),
    h("td", { class: "num" }, formatCount(cache.hits || 0)),
    h("td", { class: "num" }, formatCount(cache.misses || 0)),
    h("td", { class: "num" }, ratio),
    h("td", { class: "num" }, formatCount(cache.evictions || 0)),
    h("td", { class: "num" }, `${Math.round((cache.ttlMs || 0) / 1000)} s`));
}

/** The DAX card, or null when the endpoint serves no DAX. */
export async function daxCard() {
  const { ok, data } = await admin("dax");
  if (!ok) return null;
  const card = h("div", { class: "card", id: "dax-card" });
  const draw = (figures) => {
    card.replaceChildren(
      h("div", { class: "row center" }, h("h2", {}, "DAX endpoint"), h("div", { class: "spacer" }),
        h("button", { class: "small", id: "dax-flush", "data-write": true, onclick: flush }, "Flush caches")),
      h("p", { class: "muted" }, "Amazon's DAX clients connect to ", h("code", { id: "dax-url" }, figures.Url),
        ". Writes made over HTTP do not reach these caches: a DAX read can be stale until its TTL, as on DAX."),
      h("table", { class: "plain", id: "dax-caches" },
        h("thead", {}, h("tr", {}, ["Cache", "Entries", "Size", "Hits", "Misses", "Hit ratio", "Evictions", "TTL"].map((label) => h("th", {}, label)))),
        h("tbody", {}, cacheRow("item", figures.itemCache || {}), cacheRow("query", figures.queryCache || {}))),
      h("p", { class: "muted" }, `${figures.connections || 0} connections · ${formatCount(Object.values(figures.requests || {}).reduce((a, b) => a + b, 0))} requests · ${figures.errors || 0} errors`));
  };
  async function flush() {
    const answer = await admin("dax/flush", { method: "POST", body: "{}" });
    if (!answer.ok) { toast(answer.data.message || "Could not flush the DAX caches", "error"); return; }
    const flushed = answer.data.Flushed || {};
    toast(`Flushed ${flushed.item || 0} items and ${flushed.query || 0} queries`, "ok");
    const again = await admin("dax");
    if (again.ok) draw(again.data);
  }
  draw(data);
  return card;
}
