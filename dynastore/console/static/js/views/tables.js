// Tables: the list (item counts, sizes), create, delete with confirmation, describe.

import { ApiError, call, describeTable, forgetTable, listAllTables } from "../api.js";
import { GENERATORS } from "../codegen.js";
import { keySchemaOf } from "../ddb.js";
import { go, refreshSidebar, setPageKeys, tableHash } from "../nav.js";
import { clear, copyText, field, formatBytes, formatCount, h, modal, select, spinner, toast } from "../ui.js";
import { daxCard } from "./dax.js";
import { session } from "../session.js";

const DESCRIBE_CONCURRENCY = 8;

export async function renderTableList(view) {
  const body = h("div", {}, h("div", { class: "empty" }, spinner(), " Loading tables…"));
  view.append(h("div", { class: "page-head" }, h("h1", {}, "Tables"), h("div", { class: "spacer" }),
    h("button", { onclick: () => go("#/") }, "Refresh"), h("button", { class: "primary", "data-write": true, onclick: () => go("#/create") }, "+ Create table")), body);
  const names = await listAllTables();
  const dax = daxCard().catch(() => null);  // a card only when the server serves DAX (views/dax.js)
  if (!names.length) {
    clear(body, h("div", { class: "card empty" }, h("p", {}, "No tables yet."), h("button", { class: "primary", "data-write": true, onclick: () => go("#/create") }, "Create your first table")));
    appendDax(body, dax);
    return;
  }
  const descriptions = await describeAll(names);
  const rows = names.map((name, index) => tableRow(name, descriptions[index]));
  const totals = descriptions.reduce((sum, d) => ({ items: sum.items + (d?.ItemCount || 0), bytes: sum.bytes + (d?.TableSizeBytes || 0) }), { items: 0, bytes: 0 });
  clear(body,
    h("p", { class: "muted" }, `${names.length} tables · ${formatCount(totals.items)} items · ${formatBytes(totals.bytes)}`),
    h("div", { class: "table-wrap" }, h("table", { class: "grid", id: "tables-grid" },
      h("thead", {}, h("tr", {}, ["Name", "Status", "Partition key", "Sort key", "Items", "Size", "Capacity", "Indexes", ""].map((label, i) => h("th", { class: i === 4 || i === 5 ? "num" : "" }, label)))),
      h("tbody", {}, rows))));
  appendDax(body, dax);
  keyboardRows(body.querySelector("tbody"), (row) => go(tableHash(row.dataset.table)));
}

async function appendDax(body, pending) {
  const card = await pending;
  if (card) body.append(card);
}

async function describeAll(names) {
  const results = new Array(names.length);
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const index = next++;
      try { results[index] = await describeTable(names[index], { fresh: true }); } catch { results[index] = null; }
    }
  };
  await Promise.all(Array.from({ length: Math.min(DESCRIBE_CONCURRENCY, names.length) }, worker));
  return results;
}

function keyLabel(table, type) {
  const entry = table.KeySchema.find((k) => k.KeyType === type);
  if (!entry) return h("span", { class: "faint" }, "—");
  const definition = table.AttributeDefinitions.find((d) => d.AttributeName === entry.AttributeName);
  return h("span", {}, entry.AttributeName, " ", h("span", { class: `badge t-${definition?.AttributeType}` }, definition?.AttributeType));
}

function capacityLabel(table) {
  if (table.BillingModeSummary?.BillingMode === "PAY_PER_REQUEST") return "On-demand";
  const t = table.ProvisionedThroughput || {};
  return `${t.ReadCapacityUnits ?? "?"} RCU / ${t.WriteCapacityUnits ?? "?"} WCU`;
}

function tableRow(name, table) {
  if (!table) return h("tr", { dataset: { table: name } }, h("td", {}, name), h("td", { colspan: 8, class: "error-text" }, "DescribeTable failed"));
  const gsi = (table.GlobalSecondaryIndexes || []).length;
  const lsi = (table.LocalSecondaryIndexes || []).length;
  return h("tr", { dataset: { table: name }, onclick: () => go(tableHash(name)) },
    h("td", {}, h("a", { href: tableHash(name) }, h("strong", {}, name))),
    h("td", {}, h("span", { class: `pill ${table.TableStatus === "ACTIVE" ? "ok" : "warn"}` }, table.TableStatus)),
    h("td", {}, keyLabel(table, "HASH")), h("td", {}, keyLabel(table, "RANGE")),
    h("td", { class: "num" }, formatCount(table.ItemCount)), h("td", { class: "num" }, formatBytes(table.TableSizeBytes)),
    h("td", {}, capacityLabel(table)),
    h("td", {}, gsi || lsi ? `${gsi} GSI · ${lsi} LSI` : h("span", { class: "faint" }, "none")),
    h("td", {}, h("div", { class: "btn-row" },
      h("button", { class: "small", onclick: (e) => { e.stopPropagation(); go(tableHash(name, "overview")); } }, "Describe"),
      h("button", { class: "small danger", "data-write": true, onclick: (e) => { e.stopPropagation(); deleteTableFlow(name); } }, "Delete"))));
}

/** j/k/Enter over the rows of a tbody. */
export function keyboardRows(tbody, open) {
  let selected = -1;
  const rows = () => [...tbody.querySelectorAll("tr")];
  const mark = (index) => {
    const all = rows();
    if (!all.length) return;
    selected = Math.max(0, Math.min(all.length - 1, index));
    all.forEach((row, i) => row.classList.toggle("selected", i === selected));
    all[selected].scrollIntoView({ block: "nearest" });
  };
  setPageKeys((event, typing) => {
    if (typing || event.ctrlKey || event.metaKey) return false;
    if (event.key === "j" || event.key === "ArrowDown") { mark(selected + 1); return true; }
    if (event.key === "k" || event.key === "ArrowUp") { mark(selected - 1); return true; }
    if (event.key === "Enter" && selected >= 0) { open(rows()[selected]); return true; }
    return false;
  });
}

export async function deleteTableFlow(name) {
  const input = h("input", { type: "text", placeholder: name, autocomplete: "off", "aria-label": "Table name to confirm" });
  const confirmed = await modal({
    title: `Delete table ${name}?`,
    body: h("div", { class: "stack" }, h("p", {}, "This deletes the table and every item in it. It cannot be undone."),
      field(`Type the table name (${name}) to confirm`, input)),
    actions: [["Cancel", false], ["Delete table", () => {
      if (input.value !== name) { input.classList.add("invalid"); return undefined; }
      return true;
    }, "danger solid"]],
  });
  if (!confirmed) return;
  try {
    await call("DeleteTable", { TableName: name });
    forgetTable(name);
    toast(`Table ${name} deleted`, "ok");
    await refreshSidebar();
    go("#/");
  } catch (error) {
    toast(`${error.code}: ${error.message}`, "error", 8000);
  }
}

// --- create ----------------------------------------------------------------------------------
const KEY_TYPES = [["S", "String"], ["N", "Number"], ["B", "Binary"]];
const PROJECTIONS = ["ALL", "KEYS_ONLY", "INCLUDE"];
const STREAM_VIEWS = [["", "Off"], ["NEW_AND_OLD_IMAGES", "New and old images"], ["NEW_IMAGE", "New image"], ["OLD_IMAGE", "Old image"], ["KEYS_ONLY", "Keys only"]];

export async function renderCreateTable(view) {
  const form = {
    name: h("input", { type: "text", placeholder: "e.g. app", "data-focus": true, id: "create-name" }),
    pk: h("input", { type: "text", value: "PK", id: "create-pk" }), pkType: select(KEY_TYPES, "S", { id: "create-pk-type" }),
    sk: h("input", { type: "text", value: "SK", id: "create-sk" }), skType: select(KEY_TYPES, "S", { id: "create-sk-type" }),
    billing: select([["PAY_PER_REQUEST", "On-demand"], ["PROVISIONED", "Provisioned"]], "PAY_PER_REQUEST", { id: "create-billing" }),
    rcu: h("input", { type: "number", value: "5", min: "1", style: { width: "90px" } }), wcu: h("input", { type: "number", value: "5", min: "1", style: { width: "90px" } }),
    stream: select(STREAM_VIEWS, ""), ttl: h("input", { type: "text", placeholder: "e.g. expiresAt" }),
    tags: h("textarea", { rows: 2, placeholder: "team=payments\nenv=dev", class: "mono" }),
  };
  const gsiRows = h("div", { class: "stack" });
  const lsiRows = h("div", { class: "stack" });
  const preview = h("pre", { class: "codeblock" });
  const problem = h("div", { class: "error-text" });
  const provisioned = h("div", { class: "row" }, field("Read capacity", form.rcu), field("Write capacity", form.wcu));
  const update = () => {
    provisioned.style.display = form.billing.value === "PROVISIONED" ? "" : "none";
    try { preview.textContent = JSON.stringify(createRequest(form, gsiRows, lsiRows), null, 2); problem.textContent = ""; } catch (error) { problem.textContent = error.message; }
  };
  const addIndexRow = (container, local) => {
    const row = indexRow(local, update);
    container.append(row);
    update();
  };
  const submit = h("button", { class: "primary", id: "create-submit", "data-write": true, onclick: () => createTable(form, gsiRows, lsiRows, submit, problem) }, "Create table");
  view.append(
    h("div", { class: "page-head" }, h("h1", {}, "Create table")),
    h("div", { class: "builder-grid", oninput: update, onchange: update },
      h("div", { class: "stack" },
        h("div", { class: "card stack" }, h("h2", {}, "Table"), field("Table name", form.name, "3–255 characters: a-z A-Z 0-9 _ - ."),
          h("div", { class: "row" }, field("Partition key", form.pk), field("Type", form.pkType)),
          h("div", { class: "row" }, field("Sort key (optional)", form.sk), field("Type", form.skType)),
          h("div", { class: "row" }, field("Capacity mode", form.billing), provisioned)),
        h("div", { class: "card stack" }, h("div", { class: "row center" }, h("h2", {}, "Global secondary indexes"), h("div", { class: "spacer" }), h("button", { class: "small", onclick: () => addIndexRow(gsiRows, false) }, "+ GSI")), gsiRows),
        h("div", { class: "card stack" }, h("div", { class: "row center" }, h("h2", {}, "Local secondary indexes"), h("div", { class: "spacer" }), h("button", { class: "small", onclick: () => addIndexRow(lsiRows, true) }, "+ LSI")), lsiRows),
        h("div", { class: "card stack" }, h("h2", {}, "Lifecycle"), h("div", { class: "row" }, field("Stream", form.stream), field("TTL attribute (optional)", form.ttl)), field("Tags (key=value per line)", form.tags)),
        problem, h("div", { class: "btn-row" }, submit, h("button", { onclick: () => history.back() }, "Cancel"))),
      h("div", { class: "card stack" }, h("h2", {}, "Request"), preview,
        h("div", { class: "btn-row" }, GENERATORS.map(([label, generate]) => h("button", { class: "small", onclick: () => {
          try { copyText(generate("CreateTable", createRequest(form, gsiRows, lsiRows), location.origin, session.region)); } catch (error) { toast(error.message, "error"); }
        } }, `Copy ${label}`))))));
  update();
}

function indexRow(local, update) {
  const row = h("div", { class: "filter-row index-row", dataset: { local: local ? "1" : "" } },
    h("input", { class: "attr", placeholder: "Index name", dataset: { role: "name" } }),
    local ? null : h("input", { class: "attr", placeholder: "Partition key", dataset: { role: "pk" } }),
    local ? null : select(KEY_TYPES, "S", { dataset: { role: "pkType" } }),
    h("input", { class: "attr", placeholder: local ? "Sort key" : "Sort key (optional)", dataset: { role: "sk" } }),
    select(KEY_TYPES, "S", { dataset: { role: "skType" } }),
    select(PROJECTIONS, "ALL", { dataset: { role: "projection" } }),
    h("input", { class: "attr", placeholder: "INCLUDE attrs a,b", dataset: { role: "include" } }),
    h("button", { class: "ghost small", title: "Remove", onclick: () => { row.remove(); update(); } }, "✕"));
  return row;
}

function rowValues(row) {
  const values = {};
  for (const el of row.querySelectorAll("[data-role]")) values[el.dataset.role] = el.value.trim();
  return values;
}

function createRequest(form, gsiRows, lsiRows) {
  const name = form.name.value.trim();
  const definitions = new Map();
  const define = (attribute, type) => {
    if (!attribute) return;
    if (definitions.has(attribute) && definitions.get(attribute) !== type) throw new Error(`${attribute} is used with two types`);
    definitions.set(attribute, type);
  };
  const keySchema = (hash, range) => [{ AttributeName: hash, KeyType: "HASH" }, ...(range ? [{ AttributeName: range, KeyType: "RANGE" }] : [])];
  const projection = (values) => values.projection === "INCLUDE"
    ? { ProjectionType: "INCLUDE", NonKeyAttributes: values.include.split(",").map((s) => s.trim()).filter(Boolean) }
    : { ProjectionType: values.projection };
  const pk = form.pk.value.trim();
  const sk = form.sk.value.trim();
  if (!pk) throw new Error("The partition key needs a name");
  define(pk, form.pkType.value);
  define(sk, form.skType.value);
  const request = { TableName: name, KeySchema: keySchema(pk, sk), AttributeDefinitions: [], BillingMode: form.billing.value };
  if (form.billing.value === "PROVISIONED") request.ProvisionedThroughput = { ReadCapacityUnits: Number(form.rcu.value), WriteCapacityUnits: Number(form.wcu.value) };
  const gsis = [...gsiRows.children].map(rowValues).map((v) => {
    define(v.pk, v.pkType); define(v.sk, v.skType);
    const index = { IndexName: v.name, KeySchema: keySchema(v.pk, v.sk), Projection: projection(v) };
    if (request.ProvisionedThroughput) index.ProvisionedThroughput = { ...request.ProvisionedThroughput };
    return index;
  });
  const lsis = [...lsiRows.children].map(rowValues).map((v) => {
    if (!sk) throw new Error("A local secondary index needs a table with a sort key");
    define(v.sk, v.skType);
    return { IndexName: v.name, KeySchema: keySchema(pk, v.sk), Projection: projection(v) };
  });
  if (gsis.length) request.GlobalSecondaryIndexes = gsis;
  if (lsis.length) request.LocalSecondaryIndexes = lsis;
  request.AttributeDefinitions = [...definitions].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType }));
  if (form.stream.value) request.StreamSpecification = { StreamEnabled: true, StreamViewType: form.stream.value };
  const tags = form.tags.value.split("\n").map((line) => line.trim()).filter(Boolean).map((line) => {
    const [Key, ...rest] = line.split("=");
    return { Key: Key.trim(), Value: rest.join("=").trim() };
  });
  if (tags.length) request.Tags = tags;
  return request;
}

async function createTable(form, gsiRows, lsiRows, button, problem) {
  let request;
  try { request = createRequest(form, gsiRows, lsiRows); } catch (error) { problem.textContent = error.message; return; }
  button.disabled = true;
  problem.textContent = "";
  try {
    await call("CreateTable", request);
    await waitActive(request.TableName);
    const ttl = form.ttl.value.trim();
    if (ttl) await enableTtl(request.TableName, ttl);
    toast(`Table ${request.TableName} created`, "ok");
    await refreshSidebar();
    go(tableHash(request.TableName));
  } catch (error) {
    problem.textContent = `${error.code || error.name}: ${error.message}`;
  } finally {
    button.disabled = false;
  }
}

async function waitActive(name) {
  for (let attempt = 0; attempt < 60; attempt += 1) {
    const table = await describeTable(name, { fresh: true });
    if (table.TableStatus === "ACTIVE") return;
    await new Promise((resolve) => setTimeout(resolve, attempt < 10 ? 200 : 1000));
  }
}

async function enableTtl(name, attribute) {
  try {
    await call("UpdateTimeToLive", { TableName: name, TimeToLiveSpecification: { Enabled: true, AttributeName: attribute } });
  } catch (error) {
    toast(`Table created, but TTL was not enabled: ${error.code}: ${error.message}`, "error", 9000);
  }
}

// --- describe ----------------------------------------------------------------------------------
export async function renderOverview(body, name) {
  const table = await describeTable(name, { fresh: true });
  const [ttl, tags] = await Promise.all([
    call("DescribeTimeToLive", { TableName: name }).then((r) => r.TimeToLiveDescription, (e) => e),
    call("ListTagsOfResource", { ResourceArn: table.TableArn }).then((r) => r.Tags || [], (e) => e),
  ]);
  const keys = keySchemaOf(table);
  const facts = [
    ["Status", table.TableStatus], ["Items", formatCount(table.ItemCount)], ["Size", formatBytes(table.TableSizeBytes)],
    ["Partition key", `${keys.hash} (${typeName(table, keys.hash)})`], ["Sort key", keys.range ? `${keys.range} (${typeName(table, keys.range)})` : "—"],
    ["Capacity", capacityLabel(table)], ["Table class", table.TableClassSummary?.TableClass || "STANDARD"],
    ["Created", table.CreationDateTime ? new Date(table.CreationDateTime * 1000).toLocaleString() : "—"], ["ARN", table.TableArn],
  ];
  const indexes = [...(table.GlobalSecondaryIndexes || []).map((i) => ["GSI", i]), ...(table.LocalSecondaryIndexes || []).map((i) => ["LSI", i])];
  body.append(
    h("div", { class: "grid2" },
      h("div", { class: "card" }, h("h2", {}, "Table"), factsTable(facts)),
      h("div", { class: "card" }, h("h2", {}, "Lifecycle"), factsTable([
        ["TTL", ttl instanceof ApiError ? `unavailable (${ttl.code})` : ttl ? `${ttl.TimeToLiveStatus}${ttl.AttributeName ? ` on ${ttl.AttributeName}` : ""}` : "—"],
        ["Stream", table.StreamSpecification?.StreamEnabled ? `${table.StreamSpecification.StreamViewType}` : "Off"],
        ["Latest stream", table.LatestStreamArn || "—"],
        ["Deletion protection", table.DeletionProtectionEnabled ? "On" : "Off"],
        ["Tags", tags instanceof ApiError ? `unavailable (${tags.code})` : tags.length ? tags.map((t) => `${t.Key}=${t.Value}`).join(", ") : "none"],
      ]), h("div", { class: "btn-row", style: { marginTop: "12px" } }, h("button", { class: "danger", id: "delete-table", "data-write": true, onclick: () => deleteTableFlow(name) }, "Delete table…")))),
    h("div", { class: "card" }, h("h2", {}, `Indexes (${indexes.length})`), indexes.length ? h("table", { class: "plain" },
      h("thead", {}, h("tr", {}, ["Name", "Kind", "Partition key", "Sort key", "Projection", "Status", "Items"].map((l) => h("th", {}, l)))),
      h("tbody", {}, indexes.map(([kind, index]) => {
        const k = keySchemaOf(table, index.IndexName);
        return h("tr", {}, h("td", {}, index.IndexName), h("td", {}, kind), h("td", {}, k.hash), h("td", {}, k.range || "—"),
          h("td", {}, index.Projection.ProjectionType + (index.Projection.NonKeyAttributes ? ` (${index.Projection.NonKeyAttributes.join(", ")})` : "")),
          h("td", {}, index.IndexStatus || "ACTIVE"), h("td", { class: "num" }, formatCount(index.ItemCount)));
      }))) : h("p", { class: "muted" }, "No secondary indexes.")),
    h("div", { class: "card" }, h("details", {}, h("summary", {}, "DescribeTable response"), h("pre", { class: "codeblock" }, JSON.stringify(table, null, 2)))));
}

function typeName(table, attribute) { return (table.AttributeDefinitions.find((d) => d.AttributeName === attribute) || {}).AttributeType; }

function factsTable(facts) {
  return h("table", { class: "plain" }, h("tbody", {}, facts.map(([label, value]) => h("tr", {}, h("th", {}, label), h("td", { class: label === "ARN" || label === "Latest stream" ? "mono" : "" }, value)))));
}
