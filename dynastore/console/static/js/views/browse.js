// Items: Scan and Query pages with Next/Previous, columns from the attributes present,
// index selection, key condition and filter rows, consumed capacity beside the results.

import { call, capacityText, consoleConfig, describeTable } from "../api.js";
import { GENERATORS } from "../codegen.js";
import { attributeType, cellText, keySchemaOf, primaryKeyOf, typedValue, typeOf } from "../ddb.js";
import { COMPARISONS, ExpressionBuilder, KEY_OPERATORS, VALUE_TYPES, conditionExpression, keyConditionExpression, needsNoValue } from "../expr.js";
import { go, itemHash, setPageKeys } from "../nav.js";
import { clear, copyText, field, h, modal, select, spinner } from "../ui.js";
import { exportRows } from "./io.js";
import { session } from "../session.js";

const PAGE_SIZES = ["25", "50", "100", "200", "500"];
const states = new Map();

function stateFor(tableName) {
  if (!states.has(tableName)) {
    states.set(tableName, { mode: "scan", index: "", pk: "", skOp: "", sk: "", sk2: "", forward: true, filters: [], join: "AND", limit: "50", pages: [null], page: 0, result: null, selected: -1, ran: false });
  }
  return states.get(tableName);
}

/** Opens the Items page on a Query of one partition (from the single-table view). */
export function presetQuery(tableName, partition) {
  const state = stateFor(tableName);
  Object.assign(state, { mode: "query", index: "", pk: partition, skOp: "", sk: "", sk2: "", filters: [], pages: [null], page: 0, ran: false });
}

export function indexOptions(table) {
  return [["", `Table: ${table.TableName}`],
    ...(table.GlobalSecondaryIndexes || []).map((i) => [i.IndexName, `GSI: ${i.IndexName}`]),
    ...(table.LocalSecondaryIndexes || []).map((i) => [i.IndexName, `LSI: ${i.IndexName}`])];
}

/** The Scan or Query request a browse state describes. */
export function buildReadRequest(table, state) {
  const builder = new ExpressionBuilder();
  const request = { TableName: table.TableName };
  if (state.index) request.IndexName = state.index;
  if (state.mode === "query") {
    const keys = keySchemaOf(table, state.index);
    if (!state.pk) throw new Error(`Query needs a value for the partition key ${keys.hash}`);
    request.KeyConditionExpression = keyConditionExpression(builder, {
      hash: keys.hash, hashValue: typedValue(attributeType(table, keys.hash), state.pk, keys.hash),
      range: keys.range, rangeOp: state.skOp, rangeType: keys.range ? attributeType(table, keys.range) : "S", rangeValue: state.sk, rangeValue2: state.sk2,
    });
    if (!state.forward) request.ScanIndexForward = false;
  }
  const filter = conditionExpression(builder, state.filters, state.join);
  if (filter) request.FilterExpression = filter;
  Object.assign(request, builder.params());
  request.Limit = Number(state.limit);
  request.ReturnConsumedCapacity = "TOTAL";
  return request;
}

export async function renderBrowse(body, tableName) {
  const table = await describeTable(tableName);
  const state = stateFor(tableName);
  const form = h("div", { class: "card", id: "browse-form" });
  const results = h("div", { id: "browse-results" });
  body.append(form, results);
  const run = async (page = state.page) => {
    state.page = page;
    await runPage(table, state, results, run);
  };
  drawForm(form, table, state, () => { state.pages = [null]; run(0); });
  setPageKeys((event, typing) => pageKeys(event, typing, state, table, results, run));
  if (state.ran) await run(state.page);
  else await run(0);
}

function pageKeys(event, typing, state, table, results, run) {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { state.pages = [null]; run(0); return true; }
  if (typing || event.ctrlKey || event.metaKey || event.altKey) return false;
  const rows = [...results.querySelectorAll("tbody tr")];
  const mark = (index) => {
    if (!rows.length) return;
    state.selected = Math.max(0, Math.min(rows.length - 1, index));
    rows.forEach((row, i) => row.classList.toggle("selected", i === state.selected));
    rows[state.selected].scrollIntoView({ block: "nearest" });
  };
  switch (event.key) {
    case "j": case "ArrowDown": mark(state.selected + 1); return true;
    case "k": case "ArrowUp": mark(state.selected - 1); return true;
    case "Enter": if (state.selected >= 0 && rows[state.selected]) { rows[state.selected].click(); return true; } return false;
    case "n": if (state.result?.LastEvaluatedKey) { state.pages[state.page + 1] = state.result.LastEvaluatedKey; run(state.page + 1); } return true;
    case "p": if (state.page > 0) run(state.page - 1); return true;
    default: return false;
  }
}

function drawForm(form, table, state, submit) {
  const redraw = () => drawForm(form, table, state, submit);
  const keys = keySchemaOf(table, state.index);
  const bind = (key, attrs = {}) => h("input", { ...attrs, value: state[key], oninput: (e) => { state[key] = e.target.value; } });
  const modeSwitch = h("div", { class: "segmented", role: "tablist" },
    ["scan", "query"].map((mode) => h("button", { class: state.mode === mode ? "active" : "", id: `mode-${mode}`, onclick: () => { state.mode = mode; redraw(); } }, mode === "scan" ? "Scan" : "Query")));
  const index = select(indexOptions(table), state.index, { id: "browse-index", onchange: (e) => { state.index = e.target.value; redraw(); } });
  const controls = [field("Operation", modeSwitch), field("Index", index)];
  if (state.mode === "query") {
    controls.push(field(`${keys.hash} (${attributeType(table, keys.hash)}) =`, bind("pk", { id: "query-pk", "data-focus": true, class: "mono", placeholder: "partition key value" })));
    if (keys.range) {
      const op = select([["", "any sort key"], ...KEY_OPERATORS], state.skOp, { id: "query-sk-op", onchange: (e) => { state.skOp = e.target.value; redraw(); } });
      controls.push(field(`${keys.range} (${attributeType(table, keys.range)})`, op));
      if (state.skOp) controls.push(field("value", bind("sk", { id: "query-sk", class: "mono" })));
      if (state.skOp === "BETWEEN") controls.push(field("and", bind("sk2", { id: "query-sk2", class: "mono" })));
      controls.push(field("Order", select([["asc", "Ascending"], ["desc", "Descending"]], state.forward ? "asc" : "desc", { onchange: (e) => { state.forward = e.target.value === "asc"; } })));
    }
  }
  controls.push(field("Page size", select(PAGE_SIZES, state.limit, { onchange: (e) => { state.limit = e.target.value; } })));
  const filters = h("div", { class: "filter-rows" }, state.filters.map((row, i) => filterRow(row, () => { state.filters.splice(i, 1); redraw(); }, redraw)));
  clear(form,
    h("div", { class: "qform" }, controls),
    filters,
    h("div", { class: "btn-row", style: { marginTop: "12px" } },
      h("button", { class: "primary", id: "browse-run", title: "Ctrl+Enter", onclick: submit }, state.mode === "scan" ? "Scan" : "Run query"),
      h("button", { id: "add-filter", onclick: () => { state.filters.push({ attr: "", op: "=", type: "S", value: "", value2: "" }); redraw(); form.querySelector(".filter-row:last-child input")?.focus(); } }, "+ Filter"),
      state.filters.length > 1 ? select(["AND", "OR"], state.join, { onchange: (e) => { state.join = e.target.value; } }) : null,
      h("button", { "data-write": true, onclick: () => go(itemHash(table.TableName, null)) }, "+ New item"),
      h("span", { class: "hint" }, "Filters apply after the read: capacity counts the items read, not the items returned.")));
}

export function filterRow(row, remove, redraw) {
  const noValue = needsNoValue(row.op);
  return h("div", { class: "filter-row" },
    h("input", { class: "attr mono", placeholder: "attribute (a.b[0])", value: row.attr, oninput: (e) => { row.attr = e.target.value; } }),
    select(COMPARISONS, row.op, { onchange: (e) => { row.op = e.target.value; redraw(); } }),
    noValue || row.op === "attribute_type" ? null : select(VALUE_TYPES, row.type, { onchange: (e) => { row.type = e.target.value; } }),
    noValue ? null : h("input", { class: "val mono", placeholder: row.op === "attribute_type" ? "S, N, M, L, SS…" : "value", value: row.value, oninput: (e) => { row.value = e.target.value; } }),
    row.op === "BETWEEN" ? h("input", { class: "val mono", placeholder: "and", value: row.value2, oninput: (e) => { row.value2 = e.target.value; } }) : null,
    h("button", { class: "ghost small", title: "Remove filter", onclick: remove }, "✕"));
}

async function runPage(table, state, results, run) {
  let request;
  try {
    request = buildReadRequest(table, state);
  } catch (error) {
    clear(results, h("div", { class: "card error-text" }, error.message));
    return;
  }
  const start = state.pages[state.page];
  if (start) request.ExclusiveStartKey = start;
  clear(results, h("div", { class: "results-head" }, spinner(), h("span", { class: "muted" }, "Reading…")));
  const started = performance.now();
  let response;
  try {
    response = await call(state.mode === "scan" ? "Scan" : "Query", request);
  } catch (error) {
    clear(results, h("div", { class: "card" }, h("div", { class: "error-text", id: "browse-error" }, `${error.code}: ${error.message}`)));
    return;
  }
  state.ran = true;
  state.result = response;
  state.selected = -1;
  drawResults(table, state, results, response, request, performance.now() - started, run);
}

export function columnsOf(table, items, indexName) {
  const keyNames = [];
  const addKey = (name) => { if (name && !keyNames.includes(name)) keyNames.push(name); };
  const primary = keySchemaOf(table);
  addKey(primary.hash); addKey(primary.range);
  if (indexName) { const k = keySchemaOf(table, indexName); addKey(k.hash); addKey(k.range); }
  const counts = new Map();
  for (const item of items) for (const name of Object.keys(item)) if (!keyNames.includes(name)) counts.set(name, (counts.get(name) || 0) + 1);
  const others = [...counts.keys()].sort((a, b) => counts.get(b) - counts.get(a) || a.localeCompare(b));
  return { keyNames: keyNames.filter((name) => items.length === 0 || items.some((item) => name in item)), others };
}

export function itemsTable(table, items, indexName, onOpen) {
  const { keyNames, others } = columnsOf(table, items, indexName);
  const columns = [...keyNames, ...others];
  return h("div", { class: "table-wrap" }, h("table", { class: "grid", id: "items-grid" },
    h("thead", {}, h("tr", {}, columns.map((name) => h("th", { class: keyNames.includes(name) ? "key" : "", title: name }, name)))),
    h("tbody", {}, items.map((item) => h("tr", { onclick: () => onOpen(item) }, columns.map((name) => {
      const value = item[name];
      if (!value) return h("td", { class: "cell" }, h("span", { class: "missing" }, "·"));
      const type = typeOf(value);
      return h("td", { class: `cell t-${type}${type === "N" ? " num" : ""}`, title: `${type}: ${cellText(value, 2000)}` }, cellText(value));
    }))))));
}

function drawResults(table, state, results, response, request, ms, run) {
  const items = response.Items || [];
  const capacity = capacityText(response.ConsumedCapacity, "RCU");  // a Query or Scan
  const next = h("button", { id: "page-next", disabled: !response.LastEvaluatedKey, title: "n", onclick: () => { state.pages[state.page + 1] = response.LastEvaluatedKey; run(state.page + 1); } }, "Next →");
  const previous = h("button", { id: "page-prev", disabled: state.page === 0, title: "p", onclick: () => run(state.page - 1) }, "← Previous");
  const open = (item) => go(itemHash(table.TableName, primaryKeyOf(table, item)));
  clear(results,
    h("div", { class: "results-head" },
      h("span", { class: "pill accent", id: "result-count" }, `${items.length} items`),
      h("span", { class: "pill" }, `scanned ${response.ScannedCount ?? items.length}`),
      capacity ? h("span", { class: "pill ok", id: "result-capacity", title: "ConsumedCapacity" }, capacity) : null,
      h("span", { class: "pill" }, `${ms.toFixed(0)} ms`),
      h("span", { class: "muted" }, `page ${state.page + 1}${response.LastEvaluatedKey ? "" : " (last)"}`),
      h("div", { class: "pager" },
        h("button", { class: "small", onclick: () => showCode(state.mode === "scan" ? "Scan" : "Query", request) }, "Copy as code"),
        exportMenu(table, items),
        previous, next)),
    items.length ? itemsTable(table, items, state.index, open)
      : h("div", { class: "card empty" }, response.LastEvaluatedKey ? "No items on this page matched the filter — try Next." : "No items."));
}

function exportMenu(table, items) {
  const actions = {
    "page-json": () => exportRows(table.TableName, items, "json"),
    "page-csv": () => exportRows(table.TableName, items, "csv"),
    // The whole table is exported by the server (ExportTableToPointInTime) into a bucket,
    // never gathered page by page in this tab: the Import / Export page starts it.
    table: () => { location.hash = `#/t/${encodeURIComponent(table.TableName)}/io`; },
  };
  return select([["", "Export…"], ["page-json", "This page · DynamoDB JSON"], ["page-csv", "This page · CSV"],
    ["table", "Whole table · export on the server…"]], "", {
    class: "small", id: "export-menu", "aria-label": "Export",
    onchange: (event) => { const action = actions[event.target.value]; event.target.value = ""; if (action) action(); },
  });
}

export async function showCode(operation, request) {
  const { endpoint } = await consoleConfig();
  const params = { ...request };
  delete params.ExclusiveStartKey;
  const code = h("pre", { class: "codeblock" });
  const tabs = h("div", { class: "code-tabs" });
  const show = (index) => {
    code.textContent = GENERATORS[index][1](operation, params, endpoint, session.region);
    [...tabs.children].forEach((button, i) => button.classList.toggle("active", i === index));
  };
  GENERATORS.forEach(([label], index) => tabs.append(h("button", { class: "small", onclick: () => show(index) }, label)));
  show(0);
  modal({ title: `${operation} as code`, wide: true, body: h("div", {}, tabs, code), actions: [["Copy", () => { copyText(code.textContent); return undefined; }], ["Close", null, "primary"]] });
}

