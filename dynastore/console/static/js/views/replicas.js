// Replicas: a global table's regions (DescribeTable's Replicas, GlobalTableVersion,
// MultiRegionConsistency, witnesses), adding and deleting a replica
// (UpdateTable ReplicaUpdates), and on a dynastore endpoint what replication is
// doing now: the lag of what is still queued, the writes applied, the overwrites
// and discarded writes of last-writer-wins, pause / resume of a region
// (/_dynastore/replication through /console/admin/replication).

import { admin, call, describeTable, forgetAllTables } from "../api.js";
import { tableHash } from "../nav.js";
import { session, setRegion, validRegion } from "../session.js";
import { clear, confirmDialog, field, h, spinner, toast } from "../ui.js";

function seconds(value) {
  if (value === null || value === undefined) return "—";
  return value < 1 ? `${Math.round(value * 1000)} ms` : `${value.toFixed(1)} s`;
}

/** Per region: its replica's figures and what waits to reach it, from /_dynastore/replication. */
export function replicationRows(state, tableName, regions) {
  const now = state?.Now ?? 0;
  const byRegion = new Map((state?.Replicas || []).filter((entry) => entry.TableName === tableName).map((entry) => [entry.Region, entry]));
  return regions.map((region) => {
    const entry = byRegion.get(region);
    const pending = entry ? Object.values(entry.Pending || {}).reduce((sum, count) => sum + count, 0) : null;
    const lag = entry && entry.OldestPendingAt !== null && entry.OldestPendingAt !== undefined ? Math.max(0, now - entry.OldestPendingAt) : (entry ? 0 : null);
    return {
      region, pending, lag, applied: entry?.Applied ?? null, overwrites: entry?.Overwrites ?? null, discarded: entry?.Discarded ?? null,
      paused: (state?.Paused || []).includes(region),
    };
  });
}

function openInRegion(region, table) {
  setRegion(region);
  forgetAllTables();
  location.hash = tableHash(table, "replicas");
  location.reload();
}

async function addReplica(table, input, redraw) {
  const region = input.value.trim();
  if (!validRegion(region)) { toast("A region name looks like us-west-2.", "error"); return; }
  try {
    await call("UpdateTable", { TableName: table, ReplicaUpdates: [{ Create: { RegionName: region } }] });
    toast(`Creating the replica in ${region}`);
  } catch (error) { toast(`${error.code}: ${error.message}`, "error"); }
  redraw();
}

async function deleteReplica(table, region, redraw) {
  if (!await confirmDialog("Delete replica", `Delete the replica of ${table} in ${region}? Its table there is deleted.`, "Delete", true)) return;
  try {
    await call("UpdateTable", { TableName: table, ReplicaUpdates: [{ Delete: { RegionName: region } }] });
    toast(`Deleting the replica in ${region}`);
  } catch (error) { toast(`${error.code}: ${error.message}`, "error"); }
  redraw();
}

async function setPaused(region, paused, redraw) {
  const answer = await admin("replication/change", { method: "POST", body: JSON.stringify(paused ? { pause: region } : { resume: region }) });
  if (!answer.ok) toast(`${answer.error.code}: ${answer.error.message}`, "error");
  redraw();
}

function regionRow(table, row, description, strong, redraw) {
  const here = row.region === session.region;
  const status = here ? description.TableStatus : (description.Replicas || []).find((replica) => replica.RegionName === row.region)?.ReplicaStatus;
  const figures = (value) => h("td", { class: "num" }, value === null ? "—" : String(value));
  return h("tr", { dataset: { region: row.region } },
    h("td", {}, h("strong", {}, row.region), here ? h("span", { class: "pill" }, " this region") : null),
    h("td", {}, h("span", { class: `pill ${status === "ACTIVE" ? "ok" : "warn"}` }, status || "?"), row.paused ? h("span", { class: "pill warn" }, "paused") : null),
    h("td", { class: "num", dataset: { role: "lag" } }, row.lag === null ? "—" : (row.pending ? seconds(row.lag) : "caught up")),
    figures(row.pending), figures(row.applied),
    h("td", { class: "num", dataset: { role: "overwrites" } }, row.overwrites === null ? "—" : String(row.overwrites)),
    figures(row.discarded),
    h("td", {}, h("div", { class: "btn-row" },
      here ? null : h("button", { class: "small", onclick: () => openInRegion(row.region, table) }, "Open there"),
      row.pending === null || strong ? null : h("button", { class: "small", "data-write": true, onclick: () => setPaused(row.region, !row.paused, redraw) }, row.paused ? "Resume" : "Pause"),
      here || strong ? null : h("button", { class: "small danger", "data-write": true, onclick: () => deleteReplica(table, row.region, redraw) }, "Delete"))));
}

export async function renderReplicas(view, table) {
  const body = h("div", { class: "stack", id: "replicas" }, h("div", { class: "empty" }, spinner(), " Loading replicas…"));
  view.append(body);
  const redraw = () => { clear(view); renderReplicas(view, table); };
  const description = await describeTable(table, { fresh: true });
  const input = h("input", { id: "replica-region", class: "mono", placeholder: "us-west-2", spellcheck: "false", autocomplete: "off" });
  const addForm = h("div", { class: "card stack" }, h("h2", {}, "Add a replica"),
    h("div", { class: "row" }, field("Region", input, "The table of the same name in that region, filled from this one's items.")),
    h("div", { class: "btn-row" }, h("button", { class: "primary", id: "replica-add", "data-write": true, onclick: () => addReplica(table, input, redraw) }, "Create replica")));
  const replicas = description.Replicas || [];
  if (!replicas.length) {
    clear(body, h("div", { class: "card" }, h("p", { id: "replicas-regional" }, `${table} is a regional table: it lives in ${session.region} only.`)), addForm);
    return;
  }
  const strong = description.MultiRegionConsistency === "STRONG";
  const state = await admin("replication");
  const regions = [session.region, ...replicas.map((replica) => replica.RegionName)];
  const rows = replicationRows(state.ok ? state.data : null, table, regions);
  const facts = h("p", { class: "muted", id: "replicas-facts" },
    `Global table version ${description.GlobalTableVersion} · ${strong ? "multi-region strong consistency" : "multi-region eventual consistency (last writer wins)"}`,
    (description.GlobalTableWitnesses || []).length ? ` · witness in ${description.GlobalTableWitnesses.map((w) => w.RegionName).join(", ")}` : "");
  const grid = h("table", { class: "grid", id: "replicas-grid" },
    h("thead", {}, h("tr", {}, ["Region", "Status", "Lag now", "Pending", "Applied", "Overwrites", "Discarded", ""].map((label, i) => h("th", { class: i >= 2 && i <= 6 ? "num" : "" }, label)))),
    h("tbody", {}, rows.map((row) => regionRow(table, row, description, strong, redraw))));
  clear(body, h("div", { class: "card stack" }, h("div", { class: "row center" }, h("h2", {}, "Replicas"), h("div", { class: "spacer" }),
    h("button", { class: "small", id: "replicas-refresh", onclick: redraw }, "Refresh")), facts, h("div", { class: "table-wrap" }, grid),
    state.ok ? h("p", { class: "hint" }, "Overwrites: a replicated write replaced a concurrent write made elsewhere (one of them is lost). Discarded: a replicated write arrived older than the item's current version.")
      : h("p", { class: "hint" }, "Replication figures come from a dynastore endpoint's /_dynastore/replication; this endpoint has none.")),
  strong ? null : addForm);
}

