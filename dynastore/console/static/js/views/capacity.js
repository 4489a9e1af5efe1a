// Capacity: where a table's reads and writes land — per-partition heat, the top
// keys, throttles and key-design hints — from a dynastore endpoint's
// /_dynastore/metrics (through the console's /console/admin/* routes).
// Other DynamoDB endpoints have no such route: the page says so.

import { admin } from "../api.js";
import { field, h, select, toast } from "../ui.js";

function keyText(key) {
  return Object.entries(key || {}).map(([name, value]) => `${name}=${Object.values(value)[0]}`).join(", ");
}

function units(value) { return Number(value || 0).toLocaleString(undefined, { maximumFractionDigits: 1 }); }

// The bar's length compares a partition with the busiest one (so skew shows at
// any load); its colour tells how close it is to the partition's own limit.
function heatBar(value, busiest, limit) {
  const share = limit ? Math.min(1, value / limit) : 0;
  const tone = share >= 0.8 ? "hot" : share >= 0.3 ? "warm" : "cool";
  const length = busiest > 0 ? value / busiest : 0;
  return h("div", { class: `heat ${tone}`, title: `${units(value)} of ${units(limit)} per second (${Math.round(share * 100)}% of the partition's limit)` },
    h("div", { class: "heat-fill", style: { width: `${Math.max(length * 100, value > 0 ? 2 : 0)}%` } }));
}

// One row per partition that saw traffic (of a table or a GSI).
function heatTable(id, partitions) {
  const busiestRead = Math.max(0, ...partitions.map((p) => p.ReadUnitsPerSecond || 0));
  const busiestWrite = Math.max(0, ...partitions.map((p) => p.WriteUnitsPerSecond || 0));
  return h("table", { class: "plain", id },
    h("thead", {}, h("tr", {}, ["Partition", "Reads / s", "", "Writes / s", "", "Throttled"].map((label) => h("th", {}, label)))),
    h("tbody", {}, partitions.map((partition) => h("tr", {},
      h("td", { class: "num" }, String(partition.Partition)),
      h("td", { class: "num" }, units(partition.ReadUnitsPerSecond)), h("td", {}, heatBar(partition.ReadUnitsPerSecond, busiestRead, partition.ReadLimit)),
      h("td", { class: "num" }, units(partition.WriteUnitsPerSecond)), h("td", {}, heatBar(partition.WriteUnitsPerSecond, busiestWrite, partition.WriteLimit)),
      h("td", { class: "num" }, String(partition.ThrottledRequests || 0))))));
}

// DynamoDB's Contributor Insights rules: partition key (PK) or partition and
// sort key (SK), consumed units (C) or throttle events (T).
const RULES = [
  ["PKC", "Most accessed partition keys", "ConsumedUnits", "Units"],
  ["SKC", "Most accessed keys (partition + sort)", "ConsumedUnits", "Units"],
  ["PKT", "Most throttled partition keys", "ThrottleEvents", "Throttles"],
  ["SKT", "Most throttled keys (partition + sort)", "ThrottleEvents", "Throttles"],
];

function windowLabel(window) { return `last ${window.replace(/m$/, "")} min`; }

function ruleTable(kind, title, member, heading, entries) {
  return h("div", { class: "insights-rule", dataset: { rule: kind } },
    h("h4", {}, `${title} `, h("span", { class: "muted" }, kind)),
    entries.length
      ? h("table", { class: "plain" },
        h("thead", {}, h("tr", {}, h("th", {}, "Key"), h("th", {}, heading))),
        h("tbody", {}, entries.map((entry) => h("tr", {},
          h("td", {}, h("code", {}, keyText(entry.Key))), h("td", { class: "num" }, units(entry[member]))))))
      : h("p", { class: "muted" }, "None in this window."));
}

function insightsTarget(label, target, window) {
  const rules = target.Rules || {};
  const status = target.ContributorInsightsStatus === "ENABLED"
    ? `Contributor Insights enabled (${target.ContributorInsightsMode}): DynamoDB would publish ${(target.DynamoDBRules || []).join(", ") || "no rules"}.`
    : "Contributor Insights is not enabled here: DynamoDB would publish nothing; dynastore counts anyway.";
  return h("div", { class: "insights-target", dataset: { target: label } },
    h("h3", {}, label), h("p", { class: "muted" }, status),
    h("div", { class: "insights-grid" }, RULES.filter(([kind]) => rules[kind]).map(([kind, title, member, heading]) =>
      ruleTable(kind, title, member, heading, (rules[kind] || {})[window] || []))));
}

// Top keys per table and index, as DynamoDB's Contributor Insights counts
// them, over a window the reader picks.
function insightsCard(insights) {
  const windows = insights.Windows || ["1m", "5m", "60m"];
  let current = windows.includes("5m") ? "5m" : windows[0];
  const targets = [["Table", insights.Table || {}],
    ...Object.entries(insights.Indexes || {}).map(([indexName, target]) => [`${target.IndexType || "Index"} ${indexName}`, target])];
  const content = h("div", {});
  const draw = () => content.replaceChildren(...targets.map(([label, target]) => insightsTarget(label, target, current)));
  const picker = select(windows.map((window) => [window, windowLabel(window)]), current,
    { id: "insights-window", style: { alignSelf: "flex-start", minWidth: "160px" }, onchange: (event) => { current = event.target.value; draw(); } });
  draw();
  return h("div", { class: "card", id: "key-insights" }, h("h2", {}, "Most accessed and throttled keys"),
    h("p", { class: "muted" }, "As DynamoDB's Contributor Insights rules count them: consumed read and write units, and throttle events, per key, for the table and each index (an index access counts under the index's key)."),
    field("Window", picker), content);
}

export async function renderCapacity(body, name) {
  const { ok, status, data } = await admin("metrics");
  if (!ok) {
    body.append(h("div", { class: "card" }, h("h2", {}, "Capacity"),
      h("p", { class: "muted" }, status === 404
        ? "This endpoint has no capacity metrics: partition heat is a dynastore feature."
        : `Metrics unavailable (${data.message || status}).`)));
    return;
  }
  if (data.Mode === "off") {
    const start = h("button", { id: "start-observing", onclick: async () => {
      const switched = await admin("throughput", { method: "POST", body: JSON.stringify({ Mode: "observe" }) });
      if (switched.ok) { toast("Counting capacity from now on", "ok"); body.replaceChildren(); renderCapacity(body, name); }
      else toast(switched.data.message || "Could not switch the model on", "error");
    } }, "Start observing");
    body.append(h("div", { class: "card" }, h("h2", {}, "Capacity"),
      h("p", {}, "The capacity model is off, so nothing is counted yet. Observing counts read and write units per partition and key without throttling anything (",
        h("code", {}, "dynastore serve --throughput observe"), " does the same from the start)."),
      h("div", { class: "btn-row" }, start)));
    return;
  }
  const table = (data.Tables || {})[name];
  if (!table) {
    body.append(h("div", { class: "card" }, h("h2", {}, "Capacity"), h("p", { class: "muted" },
      `Mode ${data.Mode}: no request has touched this table since counting started.`)));
    return;
  }
  const partitions = table.Partitions || [];
  const hints = table.Hints || [];
  body.append(
    h("div", { class: "card" }, h("h2", {}, `Capacity · ${data.Mode}`),
      h("table", { class: "plain" }, h("tbody", {},
        h("tr", {}, h("th", {}, "Reads / s"), h("td", { class: "num" }, `${units(table.ReadUnitsPerSecond)} of ${units(table.ReadLimit)}`)),
        h("tr", {}, h("th", {}, "Writes / s"), h("td", { class: "num" }, `${units(table.WriteUnitsPerSecond)} of ${units(table.WriteLimit)}`)),
        h("tr", {}, h("th", {}, "Partitions"), h("td", { class: "num" }, String(table.PartitionCount))),
        h("tr", {}, h("th", {}, "Throttled requests"), h("td", { class: "num", id: "throttled" }, String(table.ThrottledRequests || 0)))))),
    hints.length ? h("div", { class: "card hints" }, h("h2", {}, "Key design hints"),
      h("ul", {}, hints.map((hint) => h("li", {}, typeof hint === "string" ? hint : hint.Message || JSON.stringify(hint))))) : "",
    h("div", { class: "card" }, h("h2", {}, `Partition heat (${partitions.length} active of ${table.PartitionCount})`),
      heatTable("partition-heat", partitions)),
    ...Object.entries(table.Indexes || {}).filter(([, index]) => (index.Partitions || []).length).map(([indexName, index]) =>
      h("div", { class: "card" }, h("h2", {}, `GSI ${indexName}: partition heat (${index.Partitions.length} active of ${index.PartitionCount})`),
        h("p", { class: "muted" }, "A GSI is partitioned by its own partition key; a hot GSI partition holds back the table's writes."),
        heatTable(`index-heat-${indexName}`, index.Partitions))),
    table.ContributorInsights ? insightsCard(table.ContributorInsights) : "",
    h("div", { class: "card" }, h("h2", {}, "Top partition keys since counting started"),
      h("table", { class: "plain", id: "top-keys" },
        h("thead", {}, h("tr", {}, ["Key", "Read units", "Write units", "Throttled"].map((label) => h("th", {}, label)))),
        h("tbody", {}, (table.TopKeys || []).map((entry) => h("tr", {},
          h("td", {}, h("code", {}, keyText(entry.Key))), h("td", { class: "num" }, units(entry.ReadUnits)),
          h("td", { class: "num" }, units(entry.WriteUnits)), h("td", { class: "num" }, String(entry.ThrottledRequests || 0))))))),
  );
}
