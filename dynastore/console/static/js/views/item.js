// The item editor: a form, DynamoDB JSON and plain JSON views that keep every type,
// validation before saving, and a conditional save that refuses to overwrite a change
// made since the item was opened (the user then sees both versions).

import { call, capacityText, describeTable } from "../api.js";
import {
  TYPES, ValueError, checkWire, checkWireMap, itemSize, itemToPlainText, itemToWireText, keySchemaOf, attributeType, parseItemText,
  parseLossless, plainToWire, primaryKeyOf, sameItem, sameValue, stringifyLossless, typeOf, wireToPlain,
} from "../ddb.js";
import { ExpressionBuilder } from "../expr.js";
import { go, itemHash, setPageKeys, tableHash } from "../nav.js";
import { clear, confirmDialog, formatBytes, h, select, toast } from "../ui.js";
import { showCode } from "./browse.js";

const MAX_ITEM_BYTES = 400 * 1024;
const MAX_CONDITION_CHARS = 4000;
const VIEWS = [["form", "Form"], ["dynamo", "DynamoDB JSON"], ["plain", "JSON"]];

export async function renderItem(body, tableName, params) {
  const table = await describeTable(tableName);
  const keyParam = params.get("key");
  const key = keyParam ? checkWireMap(parseLossless(keyParam)) : null;
  let original = null;
  if (key) {
    const response = await call("GetItem", { TableName: tableName, Key: key, ConsistentRead: true, ReturnConsumedCapacity: "TOTAL" });
    original = response.Item || null;
  }
  const editor = new ItemEditor(body, table, original, key);
  if (!key && params.get("pk")) editor.prefillPartition(params.get("pk"));
  editor.draw();
  setPageKeys((event) => {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s") { editor.save(); return true; }
    return false;
  });
}

class ItemEditor {
  constructor(root, table, original, requestedKey) {
    this.root = root;
    this.table = table;
    this.keys = keySchemaOf(table);
    this.original = original;
    this.missing = Boolean(requestedKey && !original);
    this.draft = original ? structuredClone(original) : this.blankItem(requestedKey);
    this.view = "form";
    this.rows = rowsFromItem(this.draft, this.keys);
    this.openedAt = new Date();
    this.conflict = null;
    this.lastCapacity = null;
  }

  blankItem(key) {
    if (key) return structuredClone(key);
    const item = { [this.keys.hash]: { [attributeType(this.table, this.keys.hash)]: "" } };
    if (this.keys.range) item[this.keys.range] = { [attributeType(this.table, this.keys.range)]: "" };
    return item;
  }

  prefillPartition(text) {
    const type = attributeType(this.table, this.keys.hash);
    this.draft[this.keys.hash] = { [type]: text };
    this.rows = rowsFromItem(this.draft, this.keys);
  }

  // --- reading the current view -------------------------------------------------------
  readDraft() {
    this.problem.textContent = "";
    this.root.querySelectorAll(".invalid").forEach((el) => el.classList.remove("invalid"));
    try {
      if (this.view === "form") this.draft = itemFromRows(this.rows);
      else this.draft = parseItemText(this.textArea.value, this.view === "plain" ? "plain" : "wire");
      validateItem(this.table, this.keys, this.draft);
      return this.draft;
    } catch (error) {
      this.problem.textContent = error.message;
      if (this.view !== "form") this.textArea.classList.add("invalid");
      else if (error.path !== undefined) this.markRow(error.path);
      return null;
    }
  }

  markRow(path) {
    const name = String(path).split(/[.[ ]/)[0];
    const index = this.rows.findIndex((row) => row.name === name);
    const rowEl = this.root.querySelectorAll(".attr-table tbody tr")[index];
    if (rowEl) rowEl.querySelector(".value")?.classList.add("invalid");
  }

  switchView(view) {
    if (view === this.view) return;
    if (!this.readDraft()) return;
    this.view = view;
    this.rows = rowsFromItem(this.draft, this.keys);
    this.draw();
  }

  // --- drawing -----------------------------------------------------------------------------
  draw() {
    const title = this.original ? "Edit item" : this.missing ? "No item with this key — create it" : "New item";
    this.problem = h("div", { class: "error-text", id: "item-problem", role: "alert" });
    const tabs = h("div", { class: "segmented", role: "tablist" }, VIEWS.map(([id, label]) =>
      h("button", { class: this.view === id ? "active" : "", id: `view-${id}`, onclick: () => this.switchView(id) }, label)));
    let editorBody;
    if (this.view === "form") editorBody = this.formView();
    else {
      this.textArea = h("textarea", { class: "code", id: "item-text", spellcheck: "false", "aria-label": "Item JSON" });
      this.textArea.value = this.view === "plain" ? itemToPlainText(this.draft) : itemToWireText(this.draft);
      editorBody = h("div", {}, this.textArea, this.view === "plain" ? h("p", { class: "hint" },
        'Numbers keep every digit. Sets and binaries, which JSON lacks, are written {"$SS": [...]}, {"$NS": [...]}, {"$BS": [...]}, {"$B": "base64"}; a map that looks like one of these is wrapped as {"$M": {...}}.') : null);
    }
    clear(this.root,
      this.conflict ? this.conflictPanel() : null,
      h("div", { class: "editor-grid" },
        h("div", { class: "card stack" }, h("div", { class: "row center" }, h("h2", { style: { margin: 0 } }, title), h("div", { class: "spacer" }), tabs), editorBody, this.problem),
        this.sidePanel()));
  }

  formView() {
    const tbody = h("tbody", {}, this.rows.map((row, index) => this.formRow(row, index)));
    return h("div", { class: "stack" },
      h("table", { class: "plain attr-table", id: "attr-table" }, h("thead", {}, h("tr", {}, h("th", {}, "Attribute"), h("th", {}, "Type"), h("th", {}, "Value"), h("th", {}))), tbody),
      h("div", { class: "btn-row" }, h("button", { id: "add-attribute", onclick: () => {
        this.rows.push({ name: "", type: "S", text: "", key: false });
        tbody.append(this.formRow(this.rows[this.rows.length - 1], this.rows.length - 1));
        tbody.lastChild.querySelector("input").focus();
      } }, "+ Add attribute")));
  }

  formRow(row, index) {
    const valueControl = () => {
      if (row.type === "BOOL") return select(["true", "false"], row.text === "false" ? "false" : "true", { class: "value", onchange: (e) => { row.text = e.target.value; } });
      if (row.type === "NULL") return h("input", { class: "value", disabled: true, value: "null" });
      const multiline = ["M", "L", "SS", "NS", "BS"].includes(row.type) || row.text.includes("\n");
      const control = h(multiline ? "textarea" : "input", { class: "value mono", value: row.text, spellcheck: "false",
        placeholder: placeholderFor(row.type), oninput: (e) => { row.text = e.target.value; } });
      if (multiline) control.style.height = `${Math.min(240, 22 + 19 * row.text.split("\n").length)}px`;
      return control;
    };
    const cell = h("td", {}, valueControl());
    const typeSelect = select(row.key ? [attributeType(this.table, row.name)] : TYPES, row.type, { disabled: row.key, "aria-label": "type",
      onchange: (e) => { row.type = e.target.value; if (row.type === "BOOL" && !["true", "false"].includes(row.text)) row.text = "true"; clear(cell, valueControl()); } });
    const tr = h("tr", { dataset: { attribute: row.name } },
      h("td", { class: "name" }, h("input", { value: row.name, class: "mono", disabled: row.key && Boolean(this.original), "aria-label": "attribute name",
        oninput: (e) => { row.name = e.target.value; } }), row.key ? h("span", { class: "hint" }, row.name === this.keys.hash ? "partition key" : "sort key") : null),
      h("td", { class: "type" }, typeSelect), cell,
      h("td", { class: "act" }, row.key ? null : h("button", { class: "ghost small", title: "Remove attribute", "aria-label": `Remove ${row.name}`,
        onclick: () => { this.rows.splice(this.rows.indexOf(row), 1); tr.remove(); } }, "✕")));
    return tr;
  }

  sidePanel() {
    const size = itemSize(this.draft);
    const key = this.original ? primaryKeyOf(this.table, this.original) : null;
    return h("div", { class: "card stack" },
      h("div", { class: "btn-row" },
        h("button", { class: "primary", id: "item-save", "data-write": true, title: "Ctrl+S", onclick: () => this.save() }, this.original ? "Save" : "Create item"),
        h("button", { onclick: () => go(tableHash(this.table.TableName)) }, "Back"),
        this.original ? h("button", { onclick: () => this.reload() }, "Reload") : null),
      h("dl", { class: "side-facts" },
        h("dt", {}, "Table"), h("dd", {}, this.table.TableName),
        key ? [h("dt", {}, "Key"), h("dd", {}, stringifyLossless(mapPlain(key), 0).replace(/\n/g, " "))] : null,
        h("dt", {}, "Size (approx.)"), h("dd", { id: "item-size" }, `${formatBytes(size)} of ${formatBytes(MAX_ITEM_BYTES)}`),
        h("dt", {}, "Attributes"), h("dd", {}, String(Object.keys(this.draft).length)),
        h("dt", {}, "Opened"), h("dd", {}, this.openedAt.toLocaleTimeString()),
        this.lastCapacity ? [h("dt", {}, "Last write"), h("dd", {}, this.lastCapacity)] : null),
      h("p", { class: "hint" }, "Saving is conditional: if the item changed since you opened it, the save is refused and both versions are shown."),
      h("div", { class: "btn-row" },
        h("button", { class: "small", onclick: () => { if (this.readDraft()) showCode("PutItem", { TableName: this.table.TableName, Item: this.draft }); } }, "Copy as code"),
        this.original ? h("button", { class: "small danger", id: "item-delete", "data-write": true, onclick: () => this.remove() }, "Delete item") : null));
  }

  // --- saving ------------------------------------------------------------------------------
  async save() {
    const item = this.readDraft();
    if (!item) return;
    const button = this.root.querySelector("#item-save");
    if (button) button.disabled = true;
    try {
      await this.conditionalPut(item);
    } finally {
      if (button && button.isConnected) button.disabled = false;
    }
  }

  async conditionalPut(item) {
    const tableName = this.table.TableName;
    const key = primaryKeyOf(this.table, item);
    const base = this.original && sameItem(primaryKeyOf(this.table, this.original), key) ? this.original : null;
    if (this.original && !base) {
      const ok = await confirmDialog("Key changed", "You changed the item's key: this saves a new item and leaves the old one in place.", "Save as new item");
      if (!ok) return;
    }
    // A strongly consistent read first: it catches attributes added since the item was
    // opened, which the condition below (equality on every attribute we saw) cannot.
    const current = (await call("GetItem", { TableName: tableName, Key: key, ConsistentRead: true })).Item || null;
    if (!sameMaybe(current, base)) { this.showConflict(item, current); return; }
    const request = { TableName: tableName, Item: item, ReturnConsumedCapacity: "TOTAL", ReturnValuesOnConditionCheckFailure: "ALL_OLD", ...unchangedCondition(this.keys, base) };
    try {
      const response = await call("PutItem", request);
      this.lastCapacity = capacityText(response.ConsumedCapacity);
    } catch (error) {
      if (error.code !== "ConditionalCheckFailedException") { this.problem.textContent = `${error.code}: ${error.message}`; return; }
      const latest = error.data.Item || (await call("GetItem", { TableName: tableName, Key: key, ConsistentRead: true })).Item || null;
      this.showConflict(item, latest);
      return;
    }
    toast("Item saved", "ok");
    this.original = structuredClone(item);
    this.missing = false;
    this.conflict = null;
    this.openedAt = new Date();
    if (!base) { history.replaceState(null, "", itemHash(tableName, key)); }
    this.draw();
  }

  showConflict(mine, current) {
    this.conflict = { mine, current };
    this.draft = mine;
    this.rows = rowsFromItem(mine, this.keys);
    this.draw();
    this.root.querySelector("#conflict")?.scrollIntoView({ block: "start" });
  }

  conflictPanel() {
    const { mine, current } = this.conflict;
    return h("div", { class: "conflict", id: "conflict", role: "alert" },
      h("h2", {}, "Not saved: this item changed since you opened it"),
      h("p", {}, current ? `Another write changed the item after you opened it at ${this.openedAt.toLocaleTimeString()}. Nothing was overwritten. Compare the versions:` :
        "The item was deleted after you opened it. Nothing was written."),
      h("div", { class: "grid2" },
        h("div", {}, h("h3", {}, "Your version"), diffBlock(mine, current, "mine")),
        h("div", {}, h("h3", {}, "Current version in the table"), current ? diffBlock(current, mine, "theirs") : h("pre", { class: "codeblock" }, "(deleted)"))),
      h("div", { class: "btn-row", style: { marginTop: "10px" } },
        h("button", { class: "danger solid", id: "conflict-overwrite", "data-write": true, onclick: () => { this.original = current; this.conflict = null; this.save(); } }, "Overwrite with my version"),
        h("button", { id: "conflict-load", onclick: () => { this.original = current; this.draft = current ? structuredClone(current) : this.blankItem(primaryKeyOf(this.table, mine)); this.rows = rowsFromItem(this.draft, this.keys); this.conflict = null; this.openedAt = new Date(); this.draw(); } }, "Load the current version"),
        h("button", { class: "ghost", onclick: () => { this.conflict = null; this.draw(); } }, "Dismiss")));
  }

  async reload() {
    const key = primaryKeyOf(this.table, this.original);
    const response = await call("GetItem", { TableName: this.table.TableName, Key: key, ConsistentRead: true });
    this.original = response.Item || null;
    this.draft = this.original ? structuredClone(this.original) : this.blankItem(key);
    this.rows = rowsFromItem(this.draft, this.keys);
    this.conflict = null;
    this.openedAt = new Date();
    this.draw();
  }

  async remove() {
    if (!(await confirmDialog("Delete this item?", "The item is deleted from the table. This cannot be undone.", "Delete item", true))) return;
    try {
      await call("DeleteItem", { TableName: this.table.TableName, Key: primaryKeyOf(this.table, this.original) });
      toast("Item deleted", "ok");
      go(tableHash(this.table.TableName));
    } catch (error) {
      this.problem.textContent = `${error.code}: ${error.message}`;
    }
  }
}

function sameMaybe(a, b) { return a === null || b === null ? a === b : sameItem(a, b); }

/** The ConditionExpression saying "the item is still the version we opened". */
export function unchangedCondition(keys, base) {
  const builder = new ExpressionBuilder();
  if (!base) return { ConditionExpression: `attribute_not_exists(${builder.name(keys.hash)})`, ...builder.params() };
  const parts = Object.entries(base).map(([name, value]) => `${builder.name(name)} = ${builder.value(value, name)}`);
  const expression = parts.join(" AND ");
  if (expression.length <= MAX_CONDITION_CHARS) return { ConditionExpression: expression, ...builder.params() };
  const fallback = new ExpressionBuilder();
  return { ConditionExpression: `attribute_exists(${fallback.name(keys.hash)})`, ...fallback.params() };
}

function mapPlain(map) { return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, wireToPlain(v)])); }

function placeholderFor(type) {
  return { S: "text", N: "12345678901234567890123456789012345678", B: "base64", SS: "one member per line", NS: "one number per line", BS: "one base64 value per line", M: '{"key": "value"}', L: '[1, "two"]' }[type] || "";
}

// --- form rows <-> item ----------------------------------------------------------------------
export function rowsFromItem(item, keys) {
  const names = Object.keys(item).sort((a, b) => rank(a, keys) - rank(b, keys));
  return names.map((name) => ({ name, type: typeOf(item[name]), text: textOf(item[name]), key: name === keys.hash || name === keys.range }));
}

function rank(name, keys) { return name === keys.hash ? 0 : name === keys.range ? 1 : 2; }

function textOf(av) {
  const type = typeOf(av);
  const v = av[type];
  switch (type) {
    case "S": case "N": case "B": return v;
    case "BOOL": return String(v);
    case "NULL": return "";
    case "SS": case "NS": case "BS": return v.join("\n");
    default: return stringifyLossless(wireToPlain(av));
  }
}

export function itemFromRows(rows) {
  const item = {};
  for (const row of rows) {
    const name = row.name;
    if (!name) throw new ValueError("", "an attribute has no name");
    if (Object.prototype.hasOwnProperty.call(item, name)) throw new ValueError(name, "this attribute name is used twice");
    Object.defineProperty(item, name, { value: valueFromRow(row), enumerable: true, writable: true, configurable: true });
  }
  return item;
}

function valueFromRow(row) {
  const members = () => row.text.split("\n").map((s) => s.trim()).filter(Boolean);
  switch (row.type) {
    case "S": return { S: row.text };
    case "BOOL": return { BOOL: row.text !== "false" };
    case "NULL": return { NULL: true };
    case "N": return checkWire({ N: row.text.trim() }, row.name);
    case "B": return plainToWire({ $B: row.text.trim() }, row.name);
    case "SS": return plainToWire({ $SS: row.text.split("\n").filter((s) => s.length) }, row.name);
    case "NS": return plainToWire({ $NS: members() }, row.name);
    case "BS": return plainToWire({ $BS: members() }, row.name);
    case "M": case "L": {
      let parsed;
      try { parsed = parseLossless(row.text); } catch (error) { throw new ValueError(row.name, error.message); }
      const value = row.type === "M" ? { M: plainToWire({ $M: parsed }, row.name).M } : plainToWire(parsed, row.name);
      if (typeOf(value) !== row.type) throw new ValueError(row.name, row.type === "L" ? "expected a JSON array" : "expected a JSON object");
      return value;
    }
    default: throw new ValueError(row.name, `unknown type ${row.type}`);
  }
}

/** Checks that an item can be written: key attributes present, typed as declared, not empty; size. */
export function validateItem(table, keys, item) {
  for (const name of [keys.hash, keys.range].filter(Boolean)) {
    const value = item[name];
    const expected = attributeType(table, name);
    if (!value) throw new ValueError(name, "the key attribute is missing");
    if (typeOf(value) !== expected) throw new ValueError(name, `a key attribute of type ${expected}, found ${typeOf(value)}`);
    if (expected !== "N" && value[expected] === "") throw new ValueError(name, "a key attribute cannot be empty");
  }
  if (itemSize(item) > MAX_ITEM_BYTES) throw new ValueError("", `the item is ${formatBytes(itemSize(item))}; DynamoDB items are at most 400 KB`);
}

function diffBlock(item, other, side) {
  const lines = Object.keys(item).map((name) => {
    const text = `  ${JSON.stringify(name)}: ${stringifyLossless(wireToPlain(item[name]), 2, 1)}`;
    const status = !other || !(name in other) ? (side === "mine" ? "added" : "added") : sameValue(item[name], other[name]) ? "" : "changed";
    return h("span", { class: `diff-line ${status}`, title: status ? `${status}` : "" }, text, "\n");
  });
  const missing = other ? Object.keys(other).filter((name) => !(name in item)).map((name) => h("span", { class: "diff-line removed" }, `(no ${JSON.stringify(name)})\n`)) : [];
  return h("pre", { class: "codeblock", dataset: { side } }, "{\n", lines, missing, "}");
}

