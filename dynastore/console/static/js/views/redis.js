// Redis: the keys of dynastore's Redis protocol (serve --redis-port) by pattern
// and type, a value viewer and editor per type, TTLs, the hottest keys with a
// hint to shard them, big values. Everything goes through the endpoint's
// /_dynastore/redis routes (dynastore/redis/admin.py); the editor runs Redis
// commands as a client would, so it writes through the same write path.

import { admin } from "../api.js";
import { clear, field, formatBytes, h, select, toast } from "../ui.js";

const TYPES = [["", "any type"], ["string", "string"], ["hash", "hash"], ["list", "list"], ["set", "set"], ["zset", "sorted set"], ["stream", "stream"]];

async function command(db, parts) {
  const answer = await admin("redis/command", { method: "POST", body: JSON.stringify({ Db: db, Command: parts.map(String) }) });
  if (!answer.ok) throw answer.error;
  if (answer.data.Error) throw new Error(answer.data.Error);
  return answer.data.Reply;
}

function ttlText(ms) {
  if (ms === null || ms === undefined) return "no TTL";
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}

function text(value) {
  if (value === null || value === undefined) return "(nil)";
  if (typeof value === "object" && !Array.isArray(value) && value.base64) return `base64:${value.base64}`;
  return typeof value === "string" ? value : JSON.stringify(value);
}

const READERS = {
  string: (key) => [["GET", key]],
  hash: (key) => [["HGETALL", key]],
  list: (key) => [["LRANGE", key, 0, 199]],
  set: (key) => [["SMEMBERS", key]],
  zset: (key) => [["ZRANGE", key, 0, 199, "WITHSCORES"]],
  stream: (key) => [["XRANGE", key, "-", "+", "COUNT", 100]],
};

function valueTable(type, reply) {
  if (type === "string") return h("pre", { class: "redis-value" }, text(reply));
  let rows;
  let heads;
  if (type === "hash") { heads = ["Field", "Value"]; rows = reply.map(([name, value]) => [text(name), text(value)]); }
  else if (type === "zset") { heads = ["Member", "Score"]; rows = reply.map(([member, score]) => [text(member), String(score)]); }
  else if (type === "stream") { heads = ["ID", "Fields"]; rows = reply.map(([id, fields]) => [text(id), fields.map(text).join(" ")]); }
  else { heads = [type === "list" ? "Index" : "#", "Element"]; rows = reply.map((value, index) => [String(index), text(value)]); }
  return h("table", { class: "plain redis-value" }, h("thead", {}, h("tr", {}, heads.map((label) => h("th", {}, label)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((cell) => h("td", {}, h("code", {}, cell)))))));
}

// The editor: one Redis command per line, run in order (e.g. HSET k f v, EXPIRE k 60).
function editor(db, key, onDone) {
  const box = h("textarea", { rows: 3, class: "redis-editor", "data-write": true, placeholder: `e.g. EXPIRE ${key} 60`, "aria-label": "Redis commands" });
  const output = h("pre", { class: "redis-output" });
  const run = async () => {
    const lines = box.value.split("\n").map((line) => line.trim()).filter(Boolean);
    const results = [];
    for (const line of lines) {
      const parts = line.match(/"[^"]*"|\S+/g).map((part) => part.replace(/^"|"$/g, ""));
      try { results.push(`${line} -> ${text(await command(db, parts))}`); } catch (error) { results.push(`${line} -> ${error.message}`); }
    }
    output.textContent = results.join("\n");
    onDone();
  };
  return h("div", { class: "card" }, h("h3", {}, "Run commands"), box,
    h("div", { class: "btn-row" }, h("button", { class: "primary", "data-write": true, onclick: run }, "Run")), output);
}

async function showKey(panel, db, described, refresh) {
  const key = described.Key;
  clear(panel, h("p", { class: "muted" }, "Loading…"));
  try {
    const [reader] = READERS[described.Type](key);
    const reply = await command(db, reader);
    clear(panel,
      h("div", { class: "card" },
        h("h3", {}, h("code", {}, key), " ", h("span", { class: "pill" }, described.Type), " ", h("span", { class: "pill" }, described.Encoding),
          " ", h("span", { class: "pill", title: "TTL" }, ttlText(described.TtlMs))),
        described.Warning ? h("p", { class: "warning big-value" }, `⚠ ${described.Warning}`) : null,
        valueTable(described.Type, reply),
        h("div", { class: "btn-row" },
          h("button", { "data-write": true, onclick: async () => { await command(db, ["PERSIST", key]); refresh(); } }, "Remove TTL"),
          h("button", { class: "danger", "data-write": true, onclick: async () => { await command(db, ["DEL", key]); toast(`Deleted ${key}`); refresh(); } }, "Delete key"))),
      editor(db, key, refresh));
  } catch (error) {
    clear(panel, h("p", { class: "error-text" }, error.message));
  }
}

function hotKeys(overview) {
  if (!overview.HotKeys.length) return h("p", { class: "muted" }, "No key operations yet.");
  return h("table", { class: "plain", id: "redis-hot-keys" },
    h("thead", {}, h("tr", {}, h("th", {}, "Key"), h("th", {}, "Operations"), h("th", {}, "Per second"), h("th", {}, ""))),
    h("tbody", {}, overview.HotKeys.map((entry) => h("tr", {},
      h("td", {}, h("code", {}, text(entry.Key))), h("td", { class: "num" }, String(entry.Operations)),
      h("td", { class: "num" }, String(entry.OperationsPerSecond)), h("td", { class: "hint" }, entry.Hint || "")))));
}

export async function renderRedis(view) {
  const status = await admin("redis");
  if (!status.ok) {
    clear(view, h("div", { class: "card" }, h("h2", {}, "Redis"),
      h("p", {}, status.data.message || "This endpoint serves no Redis protocol."),
      h("p", { class: "muted" }, "Start the server with dynastore serve --redis-port 6379.")));
    return;
  }
  const overview = status.data;
  let db = 0;
  const pattern = h("input", { type: "search", value: "*", "aria-label": "Key pattern", id: "redis-pattern" });
  const type = select(TYPES, "", { "aria-label": "Type", id: "redis-type" });
  const dbSelect = select([...Array(16).keys()].map((n) => [String(n), `db ${n}`]), "0", { "aria-label": "Database",
    onchange: (event) => { db = Number(event.target.value); load(); } });
  const list = h("div", { id: "redis-keys" });
  const panel = h("div", { id: "redis-value" });
  async function load() {
    const answer = await admin("redis/keys", { method: "POST", body: JSON.stringify({ Db: db, Match: pattern.value || "*", Type: type.value || null, Count: 200 }) });
    if (!answer.ok) { clear(list, h("p", { class: "error-text" }, answer.data.message)); return; }
    const keys = answer.data.Keys;
    clear(list, keys.length ? h("table", { class: "plain" },
      h("thead", {}, h("tr", {}, ["Key", "Type", "TTL", "Length", "Size", ""].map((label) => h("th", {}, label)))),
      h("tbody", {}, keys.map((described) => h("tr", { class: "clickable", onclick: () => showKey(panel, db, described, load) },
        h("td", {}, h("code", {}, text(described.Key))), h("td", {}, described.Type), h("td", {}, ttlText(described.TtlMs)),
        h("td", { class: "num" }, String(described.Length)), h("td", { class: "num" }, formatBytes(described.Bytes)),
        h("td", {}, described.Warning ? h("span", { class: "pill warn", title: described.Warning }, "big") : null)))))
      : h("p", { class: "muted" }, "No keys match."),
    answer.data.Total > keys.length ? h("p", { class: "muted" }, `${keys.length} of ${answer.data.Total} keys shown; narrow the pattern.`) : null);
  }
  pattern.addEventListener("keydown", (event) => { if (event.key === "Enter") load(); });
  const databases = Object.entries(overview.Databases).map(([index, counts]) => `db${index}: ${counts.Keys} keys (${counts.Expires} with a TTL)`).join(" · ");
  clear(view,
    h("div", { class: "page-head" }, h("h1", {}, "Redis"), h("span", { class: "pill accent" }, `port ${overview.Port}`),
      h("span", { class: "pill" }, `${overview.ConnectedClients} clients`), h("span", { class: "pill" }, `${overview.ExpiredKeys} expired`)),
    h("p", { class: "muted" }, databases || "No keys yet."),
    h("div", { class: "card" }, h("h3", {}, "Keys"),
      h("div", { class: "btn-row" }, field("Pattern", pattern), field("Type", type), field("Database", dbSelect), h("button", { class: "primary", onclick: load }, "Find")),
      list),
    panel,
    h("div", { class: "card" }, h("h3", {}, "Hottest keys"), hotKeys(overview)),
    overview.BigKeys.length ? h("div", { class: "card" }, h("h3", {}, "Big values"),
      h("ul", {}, overview.BigKeys.map((entry) => h("li", {}, h("code", {}, text(entry.Key)), ` (db ${entry.Db}, ${entry.Type}, ${formatBytes(entry.Bytes)}): ${entry.Warning}`)))) : null);
  await load();
}
