// Import and export as DynamoDB JSON (one {"Item": ...} per line, as DynamoDB's S3
// export writes) and CSV, with progress, cancel, and no silent partial failure.

import { call, describeTable } from "../api.js";
import { attributeType, checkWireMap, keySchemaOf, parseLossless, typeOf, typedValue } from "../ddb.js";
import { ExpressionBuilder, keyConditionExpression } from "../expr.js";
import { refreshSidebar } from "../nav.js";
import { clear, download, field, formatCount, h, modal, select, toast } from "../ui.js";

const BATCH_SIZE = 25;
const MAX_ATTEMPTS = 8;
const SCALAR_CSV_TYPES = new Set(["S", "N", "BOOL"]);

// --- formats ----------------------------------------------------------------------------------
export function toJsonLines(items) { return items.map((item) => JSON.stringify({ Item: item })).join("\n") + (items.length ? "\n" : ""); }

export function toCsv(items) {
  const names = [];
  for (const item of items) for (const name of Object.keys(item)) if (!names.includes(name)) names.push(name);
  const columnType = (name) => {
    const types = new Set(items.filter((item) => name in item).map((item) => typeOf(item[name])));
    return types.size === 1 && SCALAR_CSV_TYPES.has([...types][0]) ? [...types][0] : null;
  };
  const types = names.map(columnType);
  const header = names.map((name, i) => csvCell(types[i] ? `${name} (${types[i]})` : name));
  const rows = items.map((item) => names.map((name, i) => {
    const value = item[name];
    if (!value) return "";
    return csvCell(types[i] ? String(value[types[i]]) : JSON.stringify(value));
  }).join(","));
  return [header.join(","), ...rows].join("\r\n") + "\r\n";
}

function csvCell(text) { return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text; }

export function parseCsv(text) {
  const rows = [];
  let row = [], cell = "", quoted = false, i = 0;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i += 2; continue; }
      if (c === '"') { quoted = false; i += 1; continue; }
      cell += c; i += 1; continue;
    }
    if (c === '"' && cell === "") { quoted = true; i += 1; continue; }
    if (c === ",") { row.push(cell); cell = ""; i += 1; continue; }
    if (c === "\r" || c === "\n") {
      row.push(cell); rows.push(row); row = []; cell = "";
      i += c === "\r" && text[i + 1] === "\n" ? 2 : 1; continue;
    }
    cell += c; i += 1;
  }
  if (cell !== "" || row.length) { row.push(cell); rows.push(row); }
  return rows.filter((r) => r.length > 1 || r[0] !== "");
}

/** Items from an import file's text; throws with the line at fault (nothing is written then). */
export function parseImport(text, filename) {
  if (/\.csv$/i.test(filename)) return itemsFromCsv(text);
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) {
    return parseLossless(trimmed).map((entry, index) => wireItem(entry, `item ${index + 1}`));
  }
  return trimmed.split("\n").map((line, index) => [line, index]).filter(([line]) => line.trim()).map(([line, index]) => {
    let parsed;
    try { parsed = parseLossless(line); } catch (error) { throw new Error(`line ${index + 1}: ${error.message}`); }
    return wireItem(parsed, `line ${index + 1}`);
  });
}

function wireItem(entry, where) {
  const item = entry && entry.Item && Object.keys(entry).length === 1 ? entry.Item : entry;
  try { return checkWireMap(item); } catch (error) { throw new Error(`${where}: ${error.message}`); }
}

function itemsFromCsv(text) {
  const [header, ...rows] = parseCsv(text);
  if (!header) return [];
  const columns = header.map((cell) => {
    const found = /^(.*) \((S|N|B|BOOL)\)$/.exec(cell);
    return found ? { name: found[1], type: found[2] } : { name: cell, type: null };
  });
  return rows.map((row, index) => {
    const item = {};
    columns.forEach((column, i) => {
      const cell = row[i] ?? "";
      if (cell === "") return;
      try {
        if (column.type) item[column.name] = typedValue(column.type, cell, column.name);
        else if (/^\{"(S|N|B|BOOL|NULL|M|L|SS|NS|BS)":/.test(cell)) item[column.name] = checkWireMap({ [column.name]: parseLossless(cell) })[column.name];
        else item[column.name] = { S: cell };
      } catch (error) { throw new Error(`CSV row ${index + 2}: ${error.message}`); }
    });
    return item;
  });
}

export function exportRows(tableName, items, format) {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
  if (format === "csv") download(`${tableName}-${stamp}.csv`, toCsv(items), "text/csv");
  else download(`${tableName}-${stamp}.json`, toJsonLines(items), "application/json");
}

// --- the page ----------------------------------------------------------------------------------
export async function renderImportExport(body, tableName) {
  const table = await describeTable(tableName, { fresh: true });
  body.append(h("div", { class: "grid2" }, exportCard(table), importCard(table)));
}

function progressBox() {
  const bar = h("div", {});
  const text = h("div", { class: "muted", role: "status" });
  return { el: h("div", { class: "stack" }, h("div", { class: "progress" }, bar), text), set(done, total, message) {
    bar.style.width = `${total ? Math.min(100, (100 * done) / total) : 0}%`;
    text.textContent = message;
  } };
}

function exportCard(table) {
  const keys = keySchemaOf(table);
  const source = select([["scan", "Whole table (Scan)"], ["query", "One partition (Query)"]], "scan", { id: "export-source" });
  const partition = h("input", { class: "mono", placeholder: `${keys.hash} value`, id: "export-partition" });
  const format = select([["json", "DynamoDB JSON (lines)"], ["csv", "CSV"]], "json", { id: "export-format" });
  const partitionField = field("Partition key", partition);
  const showPartition = () => { partitionField.style.display = source.value === "query" ? "" : "none"; };
  source.addEventListener("change", showPartition);
  showPartition();
  const progress = progressBox();
  let cancelled = false;
  const start = h("button", { class: "primary", id: "export-start", onclick: async () => {
    cancelled = false;
    start.disabled = true;
    try {
      const items = await readAll(table, keys, source.value, partition.value, progress, () => cancelled);
      if (cancelled) { progress.set(0, 1, `Cancelled after ${formatCount(items.length)} items; nothing was saved.`); return; }
      exportRows(table.TableName, items, format.value);
      progress.set(1, 1, `Exported ${formatCount(items.length)} items.`);
    } catch (error) {
      progress.set(0, 1, `Export failed: ${error.code || error.name}: ${error.message}`);
    } finally { start.disabled = false; }
  } }, "Export");
  return h("div", { class: "card stack" }, h("h2", {}, "Export"), h("div", { class: "qform" }, field("Source", source), partitionField, field("Format", format)),
    h("div", { class: "btn-row" }, start, h("button", { onclick: () => { cancelled = true; } }, "Cancel")), progress.el,
    h("p", { class: "hint" }, "Pages are read one after another with LastEvaluatedKey; the file is only produced when every page was read."));
}

async function readAll(table, keys, source, partition, progress, isCancelled) {
  const request = { TableName: table.TableName };
  let operation = "Scan";
  if (source === "query") {
    const builder = new ExpressionBuilder();
    request.KeyConditionExpression = keyConditionExpression(builder, { hash: keys.hash, hashValue: typedValue(attributeType(table, keys.hash), partition, keys.hash) });
    Object.assign(request, builder.params());
    operation = "Query";
  }
  return readPages(operation, request, table.ItemCount || 0, progress, isCancelled);
}

/** Every page of a Scan or Query, one after another. */
async function readPages(operation, request, estimate, progress, isCancelled) {
  const items = [];
  let start;
  do {
    if (isCancelled()) break;
    const page = await call(operation, start ? { ...request, ExclusiveStartKey: start } : request);
    items.push(...(page.Items || []));
    start = page.LastEvaluatedKey;
    progress.set(items.length, Math.max(estimate, items.length), `${formatCount(items.length)} items read${start ? "…" : ""}`);
  } while (start);
  return items;
}

function importCard(table) {
  const file = h("input", { type: "file", accept: ".json,.jsonl,.csv", id: "import-file" });
  const progress = progressBox();
  const report = h("div", { id: "import-report" });
  let cancelled = false;
  const start = h("button", { class: "primary", id: "import-start", "data-write": true, onclick: async () => {
    const chosen = file.files[0];
    clear(report);
    if (!chosen) { toast("Choose a file first", "error"); return; }
    let items;
    try { items = parseImport(await chosen.text(), chosen.name); } catch (error) {
      clear(report, h("p", { class: "error-text" }, `Nothing was imported: ${error.message}`));
      return;
    }
    cancelled = false;
    start.disabled = true;
    try { await writeAll(table.TableName, items, progress, report, () => cancelled); } finally { start.disabled = false; refreshSidebar(); }
  } }, "Import");
  return h("div", { class: "card stack" }, h("h2", {}, "Import"), field("File (DynamoDB JSON lines or array, or CSV)", file),
    h("div", { class: "btn-row" }, start, h("button", { onclick: () => { cancelled = true; } }, "Cancel")), progress.el, report,
    h("p", { class: "hint" }, "Every item is checked before the first write. Items are written 25 at a time with BatchWriteItem; unprocessed items are retried with backoff, and the report says exactly what was and was not written."));
}

async function writeAll(tableName, items, progress, report, isCancelled) {
  let written = 0;
  const failed = [];
  for (let offset = 0; offset < items.length; offset += BATCH_SIZE) {
    if (isCancelled()) break;
    const batch = items.slice(offset, offset + BATCH_SIZE);
    try {
      const left = await writeBatch(tableName, batch);
      written += batch.length - left.length;
      left.forEach((item) => failed.push({ item, reason: "still unprocessed after retries" }));
    } catch (error) {
      batch.forEach((item) => failed.push({ item, reason: `${error.code}: ${error.message}` }));
    }
    progress.set(offset + batch.length, items.length, `${formatCount(written)} of ${formatCount(items.length)} written${failed.length ? `, ${failed.length} failed` : ""}`);
  }
  const notAttempted = items.length - written - failed.length;
  clear(report,
    h("p", { class: failed.length || notAttempted ? "error-text" : "", id: "import-summary" },
      `${formatCount(written)} written, ${formatCount(failed.length)} failed${notAttempted ? `, ${formatCount(notAttempted)} not attempted (cancelled)` : ""}.`),
    failed.length ? h("details", {}, h("summary", {}, "Failed items"), h("pre", { class: "codeblock" }, failed.map((f) => `${f.reason}\n${JSON.stringify(f.item)}`).join("\n\n"))) : null);
}

async function writeBatch(tableName, batch) {
  let requests = batch.map((item) => ({ PutRequest: { Item: item } }));
  for (let attempt = 0; attempt < MAX_ATTEMPTS && requests.length; attempt += 1) {
    if (attempt) await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 50 * 2 ** attempt)));
    const response = await call("BatchWriteItem", { RequestItems: { [tableName]: requests } });
    requests = (response.UnprocessedItems && response.UnprocessedItems[tableName]) || [];
  }
  return requests.map((request) => request.PutRequest.Item);
}

/** Export every page of the Scan or Query the Items page shows, with progress and cancel. */
export async function exportAllPages(table, operation, request, format) {
  const progress = progressBox();
  let cancelled = false;
  const params = { ...request };
  delete params.ExclusiveStartKey;
  delete params.Limit;
  let close = () => {};
  const closed = modal({ title: `Export every page of this ${operation}`, body: progress.el,
    actions: [["Cancel", () => { cancelled = true; return false; }]], onOpen: (_, closeModal) => { close = closeModal; } });
  closed.then(() => { cancelled = true; });
  try {
    const items = await readPages(operation, params, table.ItemCount || 0, progress, () => cancelled);
    if (cancelled) { toast("Export cancelled; nothing was saved", "info"); return; }
    exportRows(table.TableName, items, format);
    toast(`Exported ${formatCount(items.length)} items`, "ok");
    close(true);
  } catch (error) {
    progress.set(0, 1, `Export failed, nothing was saved: ${error.code || error.name}: ${error.message}`);
  }
}
