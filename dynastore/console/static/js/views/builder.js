// Expression builder: form rows -> key-condition, filter, condition and update expressions
// with their ExpressionAttributeNames/Values; validate against the server, run, copy as code.

import { call, capacityText, consoleConfig, describeTable } from "../api.js";
import { GENERATORS } from "../codegen.js";
import { attributeType, keySchemaOf, typedValue } from "../ddb.js";
import { ExpressionBuilder, KEY_OPERATORS, UPDATE_ACTIONS, VALUE_TYPES, conditionExpression, keyConditionExpression, needsNoValue, updateExpression } from "../expr.js";
import { go, itemHash, setPageKeys, tableHash } from "../nav.js";
import { toPartiql } from "../partiql/convert.js";
import { presetStatement } from "./partiql.js";
import { clear, copyText, field, h, select } from "../ui.js";
import { filterRow, indexOptions, itemsTable } from "./browse.js";
import { primaryKeyOf } from "../ddb.js";
import { session } from "../session.js";

const OPERATIONS = ["Query", "Scan", "UpdateItem", "DeleteItem"];
const RETURN_VALUES = ["NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"];
const states = new Map();

function stateFor(name) {
  if (!states.has(name)) {
    states.set(name, { op: "Query", index: "", pk: "", skOp: "", sk: "", sk2: "", forward: true, filters: [], join: "AND", projection: "", limit: "25",
      keyHash: "", keyRange: "", updates: [{ action: "SET", attr: "", type: "S", value: "" }], conditions: [], condJoin: "AND", returnValues: "ALL_NEW", codeTab: 0 });
  }
  return states.get(name);
}

/** The request the builder's form describes. */
export function builderRequest(table, state) {
  const builder = new ExpressionBuilder();
  const request = { TableName: table.TableName };
  const reading = state.op === "Query" || state.op === "Scan";
  if (reading) {
    if (state.index) request.IndexName = state.index;
    if (state.op === "Query") {
      const keys = keySchemaOf(table, state.index);
      if (!state.pk) throw new Error(`Enter a value for the partition key ${keys.hash}`);
      request.KeyConditionExpression = keyConditionExpression(builder, { hash: keys.hash, hashValue: typedValue(attributeType(table, keys.hash), state.pk, keys.hash),
        range: keys.range, rangeOp: state.skOp, rangeType: keys.range ? attributeType(table, keys.range) : "S", rangeValue: state.sk, rangeValue2: state.sk2 });
      if (!state.forward) request.ScanIndexForward = false;
    }
    const filter = conditionExpression(builder, state.filters, state.join);
    if (filter) request.FilterExpression = filter;
    const projection = state.projection.split(",").map((s) => s.trim()).filter(Boolean);
    if (projection.length) request.ProjectionExpression = projection.map((p) => builder.path(p)).join(", ");
    if (state.limit) request.Limit = Number(state.limit);
  } else {
    const keys = keySchemaOf(table);
    request.Key = { [keys.hash]: typedValue(attributeType(table, keys.hash), state.keyHash, keys.hash) };
    if (keys.range) request.Key[keys.range] = typedValue(attributeType(table, keys.range), state.keyRange, keys.range);
    if (state.op === "UpdateItem") {
      const update = updateExpression(builder, state.updates);
      if (!update) throw new Error("Add at least one update action");
      request.UpdateExpression = update;
    }
    const condition = conditionExpression(builder, state.conditions, state.condJoin);
    if (condition) request.ConditionExpression = condition;
    if (state.returnValues !== "NONE") request.ReturnValues = state.op === "DeleteItem" && state.returnValues !== "ALL_OLD" ? "ALL_OLD" : state.returnValues;
  }
  Object.assign(request, builder.params());
  return request;
}

/** The builder's form for toPartiql: the same rows, their values typed as the request types them. */
export function builderSpec(table, state, request) {
  const typedRows = (rows) => rows.filter((row) => row.attr && row.attr.trim()).map((row) => ({
    attr: row.attr, op: row.op,
    value: needsNoValue(row.op) ? undefined : row.op === "attribute_type" ? { S: row.value.trim() } : typedValue(row.type, row.value, row.attr),
    value2: row.op === "BETWEEN" ? typedValue(row.type, row.value2 || "", row.attr) : undefined,
  }));
  const spec = { op: state.op, table: table.TableName, index: state.index, limit: state.limit, forward: state.forward, join: state.join, condJoin: state.condJoin,
    projection: state.projection.split(","), filters: typedRows(state.filters), conditions: typedRows(state.conditions), returnValues: request.ReturnValues || "NONE" };
  if (state.op === "Query") {
    const keys = keySchemaOf(table, state.index);
    spec.key = { hash: keys.hash, hashValue: typedValue(attributeType(table, keys.hash), state.pk, keys.hash), range: keys.range };
    if (keys.range && state.skOp && state.sk) {
      const type = attributeType(table, keys.range);
      Object.assign(spec.key, { rangeOp: state.skOp, rangeValue: typedValue(type, state.sk, keys.range), rangeValue2: state.skOp === "BETWEEN" ? typedValue(type, state.sk2, keys.range) : undefined });
    }
  }
  if (request.Key) spec.itemKey = request.Key;
  spec.updates = state.updates.filter((row) => row.attr && row.attr.trim())
    .map((row) => ({ action: row.action, attr: row.attr, value: row.action === "REMOVE" ? undefined : typedValue(row.type, row.value, row.attr) }));
  return spec;
}

export async function renderBuilder(body, tableName) {
  const table = await describeTable(tableName);
  const state = stateFor(tableName);
  const { endpoint } = await consoleConfig();
  const formCard = h("div", { class: "card stack", id: "builder-form" });
  const output = h("div", { class: "stack" });
  const result = h("div", { id: "builder-result" });
  body.append(h("div", { class: "builder-grid" }, formCard, output));
  const refresh = () => drawOutput(output, result, table, state, endpoint);
  const redraw = () => { drawForm(formCard, table, state, redraw); refresh(); };
  formCard.addEventListener("input", refresh);
  formCard.addEventListener("change", refresh);
  setPageKeys((event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { output.querySelector("#builder-run")?.click(); return true; }
    return false;
  });
  redraw();
}

function drawForm(card, table, state, redraw) {
  const bind = (key, attrs = {}) => h("input", { class: "mono", ...attrs, value: state[key], oninput: (e) => { state[key] = e.target.value; } });
  const ops = h("div", { class: "segmented" }, OPERATIONS.map((op) => h("button", { class: state.op === op ? "active" : "", id: `op-${op}`, onclick: () => { state.op = op; redraw(); } }, op)));
  const sections = [field("Operation", ops)];
  if (state.op === "Query" || state.op === "Scan") {
    const keys = keySchemaOf(table, state.index);
    const readControls = [field("Index", select(indexOptions(table), state.index, { onchange: (e) => { state.index = e.target.value; redraw(); } }))];
    if (state.op === "Query") {
      readControls.push(field(`${keys.hash} =`, bind("pk", { id: "builder-pk", "data-focus": true })));
      if (keys.range) {
        readControls.push(field(keys.range, select([["", "any sort key"], ...KEY_OPERATORS], state.skOp, { id: "builder-sk-op", onchange: (e) => { state.skOp = e.target.value; redraw(); } })));
        if (state.skOp) readControls.push(field("value", bind("sk", { id: "builder-sk" })));
        if (state.skOp === "BETWEEN") readControls.push(field("and", bind("sk2", { id: "builder-sk2" })));
      }
    }
    sections.push(h("h3", {}, state.op === "Query" ? "Key condition" : "Source"), h("div", { class: "qform" }, readControls));
    sections.push(rowsSection("Filter", state.filters, state, "join", redraw, "add-builder-filter"));
    sections.push(h("div", { class: "qform" }, field("Projection (a, b.c, d[0])", bind("projection", { placeholder: "all attributes" })), field("Limit", bind("limit", { type: "number", min: "1", style: { width: "90px" } }))));
  } else {
    const keys = keySchemaOf(table);
    sections.push(h("h3", {}, "Key"), h("div", { class: "qform" }, field(`${keys.hash} (${attributeType(table, keys.hash)})`, bind("keyHash", { id: "builder-key-hash", "data-focus": true })),
      keys.range ? field(`${keys.range} (${attributeType(table, keys.range)})`, bind("keyRange", { id: "builder-key-range" })) : null));
    if (state.op === "UpdateItem") sections.push(updateSection(state, redraw));
    sections.push(rowsSection("Condition", state.conditions, state, "condJoin", redraw, "add-builder-condition"));
    sections.push(field("ReturnValues", select(state.op === "DeleteItem" ? ["NONE", "ALL_OLD"] : RETURN_VALUES, state.returnValues, { onchange: (e) => { state.returnValues = e.target.value; } })));
  }
  clear(card, sections);
}

function rowsSection(title, rows, state, joinKey, redraw, id) {
  return h("div", {}, h("div", { class: "row center" }, h("h3", {}, title),
    rows.length > 1 ? select(["AND", "OR"], state[joinKey], { onchange: (e) => { state[joinKey] = e.target.value; } }) : null),
    h("div", { class: "filter-rows" }, rows.map((row, i) => filterRow(row, () => { rows.splice(i, 1); redraw(); }, redraw))),
    h("button", { class: "small", id, style: { marginTop: "6px" }, onclick: () => { rows.push({ attr: "", op: "=", type: "S", value: "", value2: "" }); redraw(); } }, `+ ${title} row`));
}

function updateSection(state, redraw) {
  const row = (update, index) => h("div", { class: "filter-row" },
    select(UPDATE_ACTIONS, update.action, { onchange: (e) => { update.action = e.target.value; redraw(); } }),
    h("input", { class: "attr mono", placeholder: "attribute (a.b[0])", value: update.attr, oninput: (e) => { update.attr = e.target.value; } }),
    update.action === "REMOVE" ? null : select(VALUE_TYPES, update.type, { onchange: (e) => { update.type = e.target.value; } }),
    update.action === "REMOVE" ? null : h("input", { class: "val mono", placeholder: "value", value: update.value, oninput: (e) => { update.value = e.target.value; } }),
    h("button", { class: "ghost small", title: "Remove", onclick: () => { state.updates.splice(index, 1); redraw(); } }, "✕"));
  return h("div", {}, h("h3", {}, "Update"), h("div", { class: "filter-rows" }, state.updates.map(row)),
    h("button", { class: "small", id: "add-builder-update", style: { marginTop: "6px" }, onclick: () => { state.updates.push({ action: "SET", attr: "", type: "S", value: "" }); redraw(); } }, "+ Update action"));
}

function drawOutput(output, result, table, state, endpoint) {
  // Built once, then only its texts change: replacing the buttons while the user
  // clicks them (an input's change event fires on that very mousedown) loses the click.
  if (!output.firstChild) output.append(outputSkeleton(result, table, state));
  const parts = output.firstChild.ctx;
  let request;
  try {
    request = builderRequest(table, state);
  } catch (error) {
    parts.request = null;
    clear(parts.expressions, h("p", { class: "error-text", id: "builder-problem" }, error.message));
    parts.code.textContent = "";
    parts.showPartiql(null, error);
    return;
  }
  parts.request = request;
  try {
    parts.showPartiql(toPartiql(builderSpec(table, state, request)));
  } catch (error) {
    parts.showPartiql(null, error);
  }
  clear(parts.expressions,
    ["KeyConditionExpression", "UpdateExpression", "ConditionExpression", "FilterExpression", "ProjectionExpression"]
      .filter((name) => request[name]).map((name) => h("div", {}, h("div", { class: "label" }, name), h("pre", { class: "codeblock expression" }, request[name]))),
    request.ExpressionAttributeNames ? h("div", {}, h("div", { class: "label" }, "ExpressionAttributeNames"), h("pre", { class: "codeblock", id: "builder-names" }, JSON.stringify(request.ExpressionAttributeNames, null, 2))) : null,
    request.ExpressionAttributeValues ? h("div", {}, h("div", { class: "label" }, "ExpressionAttributeValues"), h("pre", { class: "codeblock", id: "builder-values" }, JSON.stringify(request.ExpressionAttributeValues, null, 2))) : null);
  parts.show(state.codeTab, endpoint);
}

function outputSkeleton(result, table, state) {
  const output = { request: null };
  const expressions = h("div", { class: "stack" });
  const code = h("pre", { class: "codeblock", id: "builder-code" });
  const tabs = h("div", { class: "code-tabs" });
  output.expressions = expressions;
  output.code = code;
  output.show = (index, endpoint) => {
    state.codeTab = index;
    output.endpoint = endpoint ?? output.endpoint;
    code.textContent = output.request ? GENERATORS[index][1](state.op, output.request, output.endpoint, session.region) : "";
    [...tabs.children].forEach((button, i) => button.classList.toggle("active", i === index));
  };
  GENERATORS.forEach(([label], index) => tabs.append(h("button", { class: "small", onclick: () => output.show(index) }, label)));
  const partiql = h("pre", { class: "codeblock expression", id: "builder-partiql" });
  const partiqlParams = h("pre", { class: "codeblock", id: "builder-partiql-params" });
  const partiqlNotes = h("p", { class: "hint", id: "builder-partiql-notes" });
  output.showPartiql = (converted, error) => {
    output.partiql = converted;
    partiql.textContent = converted ? converted.Statement : "";
    partiqlParams.textContent = converted && converted.Parameters ? JSON.stringify(converted.Parameters, null, 2) : "";
    partiqlParams.hidden = !partiqlParams.textContent;
    partiqlNotes.textContent = error ? error.message : converted.notes.join(" ");
    partiqlNotes.className = error ? "error-text" : "hint";
  };
  const openPartiql = () => {
    if (!output.partiql) return;
    presetStatement(table.TableName, { statement: output.partiql.Statement, parameters: output.partiql.Parameters || [], limit: output.partiql.Limit || "" });
    go(tableHash(table.TableName, "partiql"));
  };
  const withRequest = (action) => () => { if (output.request) action(table, state, output.request, result); };
  const fragment = h("div", { class: "stack" },
    h("div", { class: "card stack" }, h("h2", {}, "Expression"), expressions,
      h("div", { class: "btn-row" },
        h("button", { id: "builder-validate", onclick: withRequest(validate) }, "Validate on server"),
        h("button", { class: "primary", id: "builder-run", "data-write": state.op === "UpdateItem" || state.op === "DeleteItem", title: "Ctrl+Enter", onclick: withRequest(run) }, "Run"))),
    result,
    h("div", { class: "card" }, h("div", { class: "row center" }, h("h2", { style: { margin: 0 } }, "Code"), h("div", { class: "spacer" }), tabs,
      h("button", { class: "small primary", id: "builder-copy", onclick: () => copyText(code.textContent) }, "Copy")), code),
    h("div", { class: "card stack", id: "builder-partiql-card" },
      h("div", { class: "row center" }, h("h2", { style: { margin: 0 } }, "As PartiQL"), h("div", { class: "spacer" }),
        h("button", { class: "small", id: "builder-open-partiql", onclick: openPartiql }, "Open in the PartiQL tab")),
      partiql, partiqlParams, partiqlNotes));
  fragment.ctx = output;
  return fragment;
}

/** Asks the server to parse and check the expressions without reading much or writing anything. */
async function validate(table, state, request, result) {
  const probe = structuredClone(request);
  let operation = state.op;
  if (operation === "Query" || operation === "Scan") probe.Limit = 1;
  else {
    // An impossible extra condition: the server validates every expression, then refuses to write.
    probe.ExpressionAttributeNames = { ...(probe.ExpressionAttributeNames || {}), "#console_probe": keySchemaOf(table).hash };
    const never = "attribute_exists(#console_probe) AND attribute_not_exists(#console_probe)";
    probe.ConditionExpression = probe.ConditionExpression ? `(${probe.ConditionExpression}) AND ${never}` : never;
    delete probe.ReturnValues;
  }
  try {
    await call(operation, probe, { probe: true });
    show(result, "ok", "Valid: the server accepted the request.");
  } catch (error) {
    if (error.code === "ConditionalCheckFailedException") show(result, "ok", "Valid: the server parsed and checked every expression (nothing was written).");
    else show(result, "error", `${error.code}: ${error.message}`);
  }
}

function show(result, kind, message) {
  clear(result, h("div", { class: "card" }, h("div", { class: kind === "ok" ? "pill ok" : "error-text", id: "builder-validation" }, message)));
}

async function run(table, state, request, result) {
  const started = performance.now();
  try {
    const response = await call(state.op, { ...request, ReturnConsumedCapacity: "TOTAL" });
    const ms = performance.now() - started;
    const head = h("div", { class: "results-head" }, h("span", { class: "pill ok", id: "builder-run-ok" }, `${state.op} ok`),
      response.ConsumedCapacity ? h("span", { class: "pill" }, capacityText(response.ConsumedCapacity)) : null,
      response.Count !== undefined ? h("span", { class: "pill accent" }, `${response.Count} items · scanned ${response.ScannedCount}`) : null,
      h("span", { class: "pill" }, `${ms.toFixed(0)} ms`));
    const open = (item) => go(itemHash(table.TableName, primaryKeyOf(table, item)));
    clear(result, h("div", { class: "card" }, head,
      response.Items ? (response.Items.length ? itemsTable(table, response.Items, state.index, open) : h("p", { class: "muted" }, "No items."))
        : h("pre", { class: "codeblock" }, JSON.stringify(response.Attributes || {}, null, 2))));
  } catch (error) {
    show(result, "error", `${error.code}: ${error.message}`);
  }
}
