// The Import / Export page, on the server's own machinery: "Export table" starts
// ExportTableToPointInTime and follows it (DescribeExport, GET /_dynastore/exports/jobs),
// "Import into a new table" starts ImportTable and follows it (DescribeImport, GET
// /_dynastore/backups/imports); the files stay in the server's buckets, never in this
// page. A small file picked here (up to config.json's fileImportMaxBytes) can still be
// written into the open table with BatchWriteItem, checked whole before the first write.
// The format helpers below also serve the Items page's "export this page" (one page).

import { ApiError, admin, call, consoleConfig, describeTable, send } from "../api.js";
import { checkWireMap, parseLossless, typeOf, typedValue } from "../ddb.js";
import {
  COMPRESSIONS, DEFAULT_EXPORT_BUCKET, EXPORT_FORMATS, IMPORT_FORMATS, KEY_TYPES, POLL_MS,
  EXPORTS_SHOWN, defaultExportPrefix, errorLine, exportId, exportProgress, exportRequest, fileFits, filesLocation,
  importPrefixOfExport, importProgress, importRequest, isFinished, newestExports, pitrStatus, timeText,
} from "../jobs.js";
import { refreshSidebar } from "../nav.js";
import { clear, download, field, formatBytes, formatCount, h, modal, select, toast } from "../ui.js";

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
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const IMPORTS_SHOWN = 10;

export async function renderImportExport(body, tableName) {
  const [table, config] = await Promise.all([describeTable(tableName, { fresh: true }), consoleConfig()]);
  const importsList = importsCard();
  const importForm = importCard(table, importsList);
  const exportsList = exportsCard(table, config, importForm);
  body.append(
    h("div", { class: "grid2" }, exportCard(table, config, exportsList), importForm.el),
    exportsList.el,
    importsList.el,
    h("div", { class: "grid2" }, fileImportCard(table, config), backupsCard(table)),
  );
  exportsList.refresh();
  importsList.refresh();
}

function progressBox(id) {
  const bar = h("div", {});
  const text = h("div", { class: "muted", role: "status", id: `${id}-status` });
  const el = h("div", { class: "stack", id }, h("div", { class: "progress" }, bar), text);
  return { el, set(fraction, message, failed = false) {
    bar.style.width = `${Math.max(0, Math.min(100, 100 * (fraction || 0)))}%`;
    text.textContent = message;
    text.className = failed ? "error-text" : "muted";
  } };
}

/** Calls ``step`` every POLL_MS until it says the job is done or the page moved on. */
async function follow(element, step) {
  for (;;) {
    const progress = await step();
    if (progress.done || !element.isConnected) return progress;
    await sleep(POLL_MS);
  }
}

async function jobEntry(route, listKey, arn) {
  const answer = await admin(route);  // another endpoint than dynastore has no such route: no counts then
  return answer.ok ? (answer.data[listKey] || []).find((entry) => entry.Arn === arn) : undefined;
}

// --- export -------------------------------------------------------------------------------------
function exportCard(table, config, exportsList) {
  const pitr = h("div", { id: "pitr-status", class: "muted" }, "Checking point-in-time recovery…");
  const format = select(EXPORT_FORMATS.map((f) => [f, f === "ION" ? "Amazon Ion" : "DynamoDB JSON"]), "DYNAMODB_JSON", { id: "export-format" });
  const type = select([["FULL_EXPORT", "Full export"], ["INCREMENTAL_EXPORT", "Incremental export"]], "FULL_EXPORT", { id: "export-type" });
  const at = h("input", { id: "export-time", class: "mono", placeholder: "now (or 2026-12-03T08:00:00Z)" });
  const from = h("input", { id: "export-from", class: "mono", placeholder: "2026-12-03T07:00:00Z" });
  const to = h("input", { id: "export-to", class: "mono", placeholder: "now" });
  const view = select([["NEW_AND_OLD_IMAGES", "New and old images"], ["NEW_IMAGE", "New images"]], "NEW_AND_OLD_IMAGES", { id: "export-view" });
  const bucket = h("input", { id: "export-bucket", class: "mono", value: DEFAULT_EXPORT_BUCKET });
  const prefix = h("input", { id: "export-prefix", class: "mono", value: defaultExportPrefix(table.TableName) });
  const fullFields = h("div", { class: "qform" }, field("Export time", at, "any time inside the PITR window"));
  const incrementalFields = h("div", { class: "qform" }, field("From", from), field("To", to), field("View", view));
  const where = h("p", { class: "hint", id: "export-where" });
  const showWhere = () => {
    const sample = { S3Bucket: bucket.value.trim() || "?", S3Prefix: prefix.value, ExportArn: "/export/<export id>" };
    const { s3, path } = filesLocation(config.buckets, sample);
    where.textContent = path ? `Files land in ${s3} — on the server: ${path}` : `Files land in ${s3}${config.buckets ? ` (${config.buckets})` : ""}.`;
  };
  const showType = () => {
    fullFields.style.display = type.value === "FULL_EXPORT" ? "" : "none";
    incrementalFields.style.display = type.value === "INCREMENTAL_EXPORT" ? "" : "none";
  };
  type.addEventListener("change", showType);
  bucket.addEventListener("input", showWhere);
  prefix.addEventListener("input", showWhere);
  showType();
  showWhere();
  const progress = progressBox("export-progress");
  const start = h("button", { class: "primary", id: "export-start", "data-write": true, onclick: async () => {
    let request;
    try {
      request = exportRequest({ tableArn: table.TableArn, bucket: bucket.value, prefix: prefix.value, format: format.value,
        type: type.value, exportTime: at.value.trim(), fromTime: from.value.trim(), toTime: to.value.trim(), viewType: view.value });
    } catch (error) { progress.set(0, error.message, true); return; }
    start.disabled = true;
    try {
      const { ExportDescription: started } = await call("ExportTableToPointInTime", request);
      progress.set(0, exportProgress(started).text);
      exportsList.refresh();
      const arn = started.ExportArn;
      const final = await follow(progress.el, async () => {
        const [{ ExportDescription: description }, job] = await Promise.all([
          call("DescribeExport", { ExportArn: arn }), jobEntry("exports/jobs", "Jobs", arn)]);
        const shown = exportProgress(description, job);
        progress.set(shown.fraction, shown.text, shown.failed);
        return shown;
      });
      if (final.done) exportsList.refresh();
    } catch (error) {
      progress.set(0, `Export refused: ${error.code || error.name}: ${error.message}`, true);
    } finally { start.disabled = false; }
  } }, "Export table");
  loadPitr(table, pitr, (recovery) => {
    // The earliest whole second of the PITR window: where an incremental export may begin.
    const earliest = recovery.EarliestRestorableDateTime;
    if (earliest) from.placeholder = `from ${timeText(Math.ceil(Number(earliest)))}`;
  });
  return h("div", { class: "card stack", id: "export-card" }, h("h2", {}, "Export table"), pitr,
    h("div", { class: "qform" }, field("Format", format), field("Type", type)), fullFields, incrementalFields,
    h("div", { class: "qform" }, field("S3 bucket", bucket), field("Prefix", prefix)), where,
    h("div", { class: "btn-row" }, start), progress.el,
    h("p", { class: "hint" }, "ExportTableToPointInTime on the server: one point in time, written page by page into the bucket (gzip, DynamoDB's layout with manifest-summary.json and manifest-files.json); nothing passes through this page."));
}

async function loadPitr(table, box, onWindow = () => {}) {
  let status;
  try {
    const answer = await call("DescribeContinuousBackups", { TableName: table.TableName });
    status = pitrStatus(answer);
    onWindow(answer.ContinuousBackupsDescription?.PointInTimeRecoveryDescription || {});
  } catch (error) {
    clear(box, `Point-in-time recovery: unknown (${error.code}: ${error.message})`);
    return;
  }
  if (status === "ENABLED") { clear(box, h("span", { class: "pill ok" }, "PITR on"), " Point-in-time recovery is on: the table can be exported."); return; }
  const enable = h("button", { class: "small", id: "pitr-enable", "data-write": true, onclick: async () => {
    enable.disabled = true;
    try {
      await call("UpdateContinuousBackups", { TableName: table.TableName, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } });
      toast("Point-in-time recovery is on", "ok");
      loadPitr(table, box, onWindow);
    } catch (error) { enable.disabled = false; toast(`${error.code}: ${error.message}`, "error"); }
  } }, "Turn on point-in-time recovery");
  clear(box, h("span", { class: "pill warn" }, "PITR off"),
    " Point-in-time recovery is off; DynamoDB exports need it (else PointInTimeRecoveryUnavailableException). ", enable);
}

function exportsCard(table, config, importForm) {
  const rows = h("tbody", {});
  const note = h("p", { class: "hint", id: "exports-note" });
  let again = null;
  const refresh = async () => {
    const summaries = [];
    try {
      let token;
      do {  // summaries are small: read them all, then describe the newest few
        const page = await call("ListExports", { TableArn: table.TableArn, MaxResults: 25, ...(token ? { NextToken: token } : {}) });
        summaries.push(...(page.ExportSummaries || []));
        token = page.NextToken;
      } while (token);
    } catch (error) { clear(note, `ListExports: ${error.code}: ${error.message}`); return; }
    const newest = newestExports(summaries, EXPORTS_SHOWN);
    const described = await Promise.all(newest.map((summary) =>
      call("DescribeExport", { ExportArn: summary.ExportArn }).then((answer) => answer.ExportDescription, () => ({ ...summary }))));
    described.sort((a, b) => (b.StartTime || 0) - (a.StartTime || 0));
    clear(rows, described.map((description) => exportRow(description, config, importForm)));
    clear(note, !described.length ? "No exports of this table yet."
      : summaries.length > described.length ? `The ${described.length} newest of ${formatCount(summaries.length)} exports.` : "");
    clearTimeout(again);  // one refresh chain, however many exports were started
    if (described.some((description) => !isFinished(description.ExportStatus)) && rows.isConnected) again = setTimeout(refresh, POLL_MS * 2);
  };
  const el = h("div", { class: "card stack", id: "exports-card" },
    h("div", { class: "btn-row" }, h("h2", {}, "Exports of this table"), h("button", { class: "small", id: "exports-refresh", onclick: refresh }, "Refresh")),
    h("div", { class: "table-wrap" }, h("table", { class: "grid", id: "exports-grid" },
      h("thead", {}, h("tr", {}, ["Export", "Status", "Started", "Type", "Items", "Size", ""].map((name) => h("th", {}, name)))), rows)),
    note);
  return { el, refresh };
}

function exportRow(description, config, importForm) {
  const status = description.ExportStatus;
  const { s3, path } = filesLocation(config.buckets, description);
  const pill = h("span", { class: `pill ${status === "COMPLETED" ? "ok" : status === "FAILED" ? "warn" : "accent"}` }, status);
  const reason = status === "FAILED" ? h("div", { class: "error-text" }, `${description.FailureCode || ""}: ${description.FailureMessage || ""}`) : null;
  const importIt = status === "COMPLETED"
    ? h("button", { class: "small", "data-import": exportId(description.ExportArn), title: "Import these files into a new table", onclick: () => importForm.fromExport(description) }, "Import…")
    : null;
  const files = status === "COMPLETED" && config.buckets
    ? h("button", { class: "small", "data-files": exportId(description.ExportArn), onclick: () => showExportFiles(description) }, "Download…")
    : null;
  const id = exportId(description.ExportArn);
  const main = h("tr", { "data-export": id },
    h("td", { class: "mono" }, id),
    h("td", {}, pill, reason),
    h("td", { class: "mono" }, timeText(description.StartTime)),
    h("td", {}, `${description.ExportType === "INCREMENTAL_EXPORT" ? "incremental" : "full"} · ${description.ExportFormat || ""}`),
    h("td", { class: "num" }, status === "COMPLETED" ? formatCount(description.ItemCount) : "—"),
    h("td", { class: "num" }, status === "COMPLETED" ? formatBytes(description.BilledSizeBytes) : "—"),
    h("td", {}, h("div", { class: "btn-row" }, files, importIt)));
  // Where the files are, on a line of its own: a bucket path is longer than any column.
  const where = h("tr", { class: "files-row", "data-export-files": id },
    h("td", { colspan: "7", class: "files", title: path || s3 }, "Files: ", s3, path ? h("span", { class: "muted" }, ` · on the server: ${path}`) : null));
  return [main, where];
}

// A finished export's files, one download at a time: the console of `dynastore serve` reads
// them from the server's buckets once the server answered this page's DescribeExport.
const DESCRIBE_EXPORT = "DynamoDB_20120810.DescribeExport";

async function exportFileAnswer(path, description) {
  const response = await send(path, { body: JSON.stringify({ ExportArn: description.ExportArn }), target: DESCRIBE_EXPORT, signedPath: "/" });
  if (response.ok) return response;
  let data = {};
  try { data = await response.json(); } catch { data = {}; }
  throw new ApiError(data.__type || `HTTP ${response.status}`, data.message || data.Message || response.statusText, response.status, data);
}

async function showExportFiles(description) {
  const list = h("div", { class: "stack", id: "export-files" }, "Reading the export's manifests…");
  modal({ title: `Files of export ${exportId(description.ExportArn)}`, wide: true, body: list, actions: [["Close", null, "primary"]] });
  let files;
  try { files = (await (await exportFileAnswer("/console/exports/files", description)).json()).Files || []; } catch (error) {
    clear(list, h("p", { class: "error-text" }, `${error.code}: ${error.message}`)); return;
  }
  clear(list, h("table", { class: "grid" }, h("tbody", {}, files.map((file) => h("tr", { "data-file": file.Name },
    h("td", { class: "files" }, file.Key), h("td", { class: "num" }, formatBytes(file.Size)),
    h("td", {}, h("button", { class: "small", onclick: (event) => downloadExportFile(description, file, event.target) }, "Download")))))));
}

async function downloadExportFile(description, file, button) {
  button.disabled = true;
  try {
    const answer = await exportFileAnswer(`/console/exports/file?key=${encodeURIComponent(file.Key)}`, description);
    const url = URL.createObjectURL(await answer.blob());  // one file (the server caps its size), never the export
    const link = h("a", { href: url, download: file.Name });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  } catch (error) { toast(`${error.code}: ${error.message}`, "error"); } finally { button.disabled = false; }
}

// --- import from a bucket -----------------------------------------------------------------------
function importsCard() {
  const rows = h("tbody", {});
  const note = h("p", { class: "hint", id: "imports-note" });
  const refresh = async () => {
    const summaries = [];
    try {
      let token;
      do {  // oldest first: read every page, show the newest
        const page = await call("ListImports", token ? { NextToken: token } : {});
        summaries.push(...(page.ImportSummaryList || []));
        token = page.NextToken;
      } while (token);
    } catch (error) { clear(note, `ListImports: ${error.code}: ${error.message}`); return; }
    const newest = summaries.slice(-IMPORTS_SHOWN).reverse();
    clear(rows, newest.map((summary) => {
      const status = summary.ImportStatus;
      const tableName = String(summary.TableArn || "").split(":table/").pop();
      const source = summary.S3BucketSource || {};
      return h("tr", { "data-import-id": String(summary.ImportArn || "").split("/import/").pop() },
        h("td", { class: "mono" }, h("a", { href: `#/t/${encodeURIComponent(tableName)}/items` }, tableName)),
        h("td", {}, h("span", { class: `pill ${status === "COMPLETED" ? "ok" : status === "IN_PROGRESS" ? "accent" : "warn"}` }, status)),
        h("td", { class: "mono" }, timeText(summary.StartTime)),
        h("td", {}, summary.InputFormat || ""),
        h("td", { class: "files" }, `s3://${source.S3Bucket || ""}/${source.S3KeyPrefix || ""}`));
    }));
    clear(note, newest.length ? (summaries.length > newest.length ? `The ${newest.length} newest of ${formatCount(summaries.length)} imports.` : "") : "No imports yet.");
  };
  const el = h("div", { class: "card stack", id: "imports-card" },
    h("div", { class: "btn-row" }, h("h2", {}, "Imports"), h("button", { class: "small", id: "imports-refresh", onclick: refresh }, "Refresh")),
    h("div", { class: "table-wrap" }, h("table", { class: "grid", id: "imports-grid" },
      h("thead", {}, h("tr", {}, ["New table", "Status", "Started", "Format", "Source"].map((name) => h("th", {}, name)))), rows)),
    note);
  return { el, refresh };
}

function importCard(table, importsList) {
  const bucket = h("input", { id: "import-bucket", class: "mono", value: DEFAULT_EXPORT_BUCKET });
  const prefix = h("input", { id: "import-prefix", class: "mono", placeholder: "exports/table/AWSDynamoDB/<export id>/data/" });
  const format = select(IMPORT_FORMATS.map((f) => [f, f === "ION" ? "Amazon Ion" : f === "CSV" ? "CSV" : "DynamoDB JSON"]), "DYNAMODB_JSON", { id: "import-format" });
  const compression = select(COMPRESSIONS, "GZIP", { id: "import-compression" });
  const delimiter = h("input", { id: "import-delimiter", class: "mono", value: ",", maxlength: "1", size: "2" });
  const header = h("input", { id: "import-header", class: "mono", placeholder: "from the first line" });
  const csvFields = h("div", { class: "qform" }, field("Delimiter", delimiter), field("Header", header, "comma-separated names, when the files have none"));
  const name = h("input", { id: "import-table", class: "mono", value: `${table.TableName}-import` });
  const keys = table.KeySchema || [];
  const typeOfKey = (attribute) => ((table.AttributeDefinitions || []).find((d) => d.AttributeName === attribute) || {}).AttributeType || "S";
  const hashKey = (keys.find((k) => k.KeyType === "HASH") || {}).AttributeName || "";
  const rangeKey = (keys.find((k) => k.KeyType === "RANGE") || {}).AttributeName || "";
  const hash = h("input", { id: "import-pk", class: "mono", value: hashKey });
  const hashType = select(KEY_TYPES, typeOfKey(hashKey), { id: "import-pk-type" });
  const range = h("input", { id: "import-sk", class: "mono", value: rangeKey, placeholder: "none" });
  const rangeType = select(KEY_TYPES, rangeKey ? typeOfKey(rangeKey) : "S", { id: "import-sk-type" });
  const billing = select([["PAY_PER_REQUEST", "On-demand"], ["PROVISIONED", "Provisioned"]], "PAY_PER_REQUEST", { id: "import-billing" });
  const rcu = h("input", { id: "import-rcu", type: "number", min: "1", value: "5" });
  const wcu = h("input", { id: "import-wcu", type: "number", min: "1", value: "5" });
  const capacity = h("div", { class: "qform" }, field("Read units", rcu), field("Write units", wcu));
  const show = () => {
    csvFields.style.display = format.value === "CSV" ? "" : "none";
    capacity.style.display = billing.value === "PROVISIONED" ? "" : "none";
  };
  format.addEventListener("change", show);
  billing.addEventListener("change", show);
  show();
  const progress = progressBox("import-s3-progress");
  const errors = h("div", { id: "import-s3-errors" });
  const start = h("button", { class: "primary", id: "import-s3-start", "data-write": true, onclick: async () => {
    clear(errors);
    let request;
    try {
      request = importRequest({ bucket: bucket.value, prefix: prefix.value, format: format.value, compression: compression.value,
        delimiter: delimiter.value, header: header.value, tableName: name.value, hashName: hash.value, hashType: hashType.value,
        rangeName: range.value, rangeType: rangeType.value, billing: billing.value, readUnits: rcu.value, writeUnits: wcu.value });
    } catch (error) { progress.set(0, error.message, true); return; }
    start.disabled = true;
    try {
      const { ImportTableDescription: started } = await call("ImportTable", request);
      progress.set(0, importProgress(started).text);
      refreshSidebar();
      importsList.refresh();
      const arn = started.ImportArn;
      const final = await follow(progress.el, async () => {
        const [{ ImportTableDescription: description }, entry] = await Promise.all([
          call("DescribeImport", { ImportArn: arn }), jobEntry("backups/imports", "Imports", arn)]);
        const shown = importProgress(description, entry);
        progress.set(shown.fraction, shown.text, shown.failed);
        showErrors(errors, shown);
        return shown;
      });
      if (final.done && !final.failed) {
        const tableName = request.TableCreationParameters.TableName;
        errors.prepend(h("p", {}, h("a", { href: `#/t/${encodeURIComponent(tableName)}/items`, id: "import-s3-open" }, `Open ${tableName}`)));
      }
      refreshSidebar();
      importsList.refresh();
    } catch (error) {
      progress.set(0, `Import refused: ${error.code || error.name}: ${error.message}`, true);
    } finally { start.disabled = false; }
  } }, "Import into a new table");
  const el = h("div", { class: "card stack", id: "import-s3-card" }, h("h2", {}, "Import into a new table"),
    h("div", { class: "qform" }, field("S3 bucket", bucket), field("Key prefix", prefix)),
    h("div", { class: "qform" }, field("Format", format), field("Compression", compression)), csvFields,
    h("div", { class: "qform" }, field("New table", name), field("Billing", billing)), capacity,
    h("div", { class: "qform" }, field("Partition key", hash), field("Type", hashType), field("Sort key", range), field("Type", rangeType)),
    h("div", { class: "btn-row" }, start), progress.el, errors,
    h("p", { class: "hint" }, "ImportTable on the server: it creates the table, reads every object under the prefix a chunk at a time, and counts and logs the lines it cannot import (ErrorCount); the table appears ACTIVE when it is done."));
  return {
    el,
    fromExport(description) {
      bucket.value = description.S3Bucket;
      prefix.value = importPrefixOfExport(description);
      format.value = description.ExportFormat || "DYNAMODB_JSON";
      compression.value = "GZIP";
      show();
      el.scrollIntoView({ block: "nearest" });
      name.focus();
    },
  };
}

function showErrors(box, shown) {
  if (!shown.errors && !shown.samples.length) { clear(box); return; }
  clear(box, h("details", { open: true }, h("summary", {}, `${formatCount(shown.errors)} item${shown.errors === 1 ? "" : "s"} could not be imported (the first are logged):`),
    h("pre", { class: "codeblock", id: "import-s3-error-lines" }, shown.samples.map(errorLine).join("\n"))));
}

// --- a small file, from the browser ---------------------------------------------------------------
function fileImportCard(table, config) {
  const maxBytes = config.fileImportMaxBytes || 4 * 1024 * 1024;
  const file = h("input", { type: "file", accept: ".json,.jsonl,.csv", id: "import-file" });
  const progress = progressBox("import-file-progress");
  const report = h("div", { id: "import-report" });
  let cancelled = false;
  const start = h("button", { class: "primary", id: "import-start", "data-write": true, onclick: async () => {
    const chosen = file.files[0];
    clear(report);
    if (!chosen) { toast("Choose a file first", "error"); return; }
    if (!fileFits(chosen.size, maxBytes)) {
      clear(report, h("p", { class: "error-text" }, `Nothing was imported: ${chosen.name} is ${formatBytes(chosen.size)}; files up to ${formatBytes(maxBytes)} are imported from the browser — put larger ones in a bucket and use "Import into a new table".`));
      return;
    }
    let items;
    try { items = parseImport(await chosen.text(), chosen.name); } catch (error) {
      clear(report, h("p", { class: "error-text" }, `Nothing was imported: ${error.message}`));
      return;
    }
    cancelled = false;
    start.disabled = true;
    try { await writeAll(table.TableName, items, progress, report, () => cancelled); } finally { start.disabled = false; refreshSidebar(); }
  } }, "Import file");
  return h("div", { class: "card stack", id: "file-import-card" }, h("h2", {}, `Import a small file into ${table.TableName}`),
    field(`File (DynamoDB JSON lines or array, or CSV; up to ${formatBytes(maxBytes)})`, file),
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
    progress.set((offset + batch.length) / items.length, `${formatCount(written)} of ${formatCount(items.length)} written${failed.length ? `, ${failed.length} failed` : ""}`);
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

// --- backups -------------------------------------------------------------------------------------
function backupsCard(table) {
  const rows = h("tbody", {});
  const note = h("p", { class: "hint", id: "backups-note" });
  const jobs = h("div", { class: "muted", id: "backup-jobs", role: "status" });
  const backupName = h("input", { id: "backup-name", class: "mono", value: `${table.TableName}-backup` });
  const restoreName = h("input", { id: "restore-name", class: "mono", value: `${table.TableName}-restored` });
  const restoreTime = h("input", { id: "restore-time", class: "mono", placeholder: "latest restorable time" });
  const pitrWindow = h("div", { class: "hint", id: "restore-window" });
  const restored = (answer) => {
    const name = answer.TableDescription.TableName;
    toast(`Restoring into ${name}`, "ok");
    refreshSidebar();
    watchJobs();
  };
  const refresh = async () => {
    let summaries;
    try { summaries = (await call("ListBackups", { TableName: table.TableName })).BackupSummaries || []; } catch (error) {
      clear(note, `ListBackups: ${error.code}: ${error.message}`); return;
    }
    clear(rows, summaries.map((backup) => h("tr", { "data-backup": backup.BackupName },
      h("td", { class: "mono" }, backup.BackupName, " ", h("span", { class: `pill ${backup.BackupStatus === "AVAILABLE" ? "ok" : "accent"}` }, backup.BackupStatus)),
      h("td", { class: "mono" }, timeText(backup.BackupCreationDateTime)), h("td", { class: "num" }, formatBytes(backup.BackupSizeBytes)),
      h("td", {}, h("button", { class: "small", "data-write": true, "data-restore": backup.BackupName, onclick: async () => {
        try { restored(await call("RestoreTableFromBackup", { BackupArn: backup.BackupArn, TargetTableName: restoreName.value.trim() })); } catch (error) {
          toast(`${error.code}: ${error.message}`, "error");
        }
      }, title: "RestoreTableFromBackup into the table named below" }, "Restore")))));
    clear(note, summaries.length ? "" : "No backups of this table yet.");
    try {
      const answer = await call("DescribeContinuousBackups", { TableName: table.TableName });
      const pitr = answer.ContinuousBackupsDescription?.PointInTimeRecoveryDescription || {};
      clear(pitrWindow, pitrStatus(answer) === "ENABLED"
        ? `PITR on: restorable from ${timeText(pitr.EarliestRestorableDateTime)} to ${timeText(pitr.LatestRestorableDateTime)}`
        : "PITR off: turn it on (Export table) to restore to a time.");
    } catch (error) { clear(pitrWindow, `${error.code}: ${error.message}`); }
  };
  const watchJobs = async () => {
    for (let round = 0; rows.isConnected && round < 600; round += 1) {
      const answer = await admin("backups/jobs");
      if (!answer.ok) { clear(jobs); return; }
      const mine = (answer.data.Jobs || []).filter((job) => job.Table === table.TableName || job.Kind === "restore");
      clear(jobs, mine.map((job) => h("div", {}, `${job.Kind} ${job.Id || ""}: ${job.Status} · ${formatCount(job.Items)}${job.TotalItems ? ` of ${formatCount(job.TotalItems)}` : ""} items`)));
      if (!mine.some((job) => !isFinished(job.Status) && job.Status !== "FAILED")) { refresh(); refreshSidebar(); return; }
      await sleep(POLL_MS);
    }
  };
  const create = h("button", { class: "primary", id: "backup-create", "data-write": true, onclick: async () => {
    try {
      await call("CreateBackup", { TableName: table.TableName, BackupName: backupName.value.trim() });
      toast("Backup started", "ok");
      await refresh();
      watchJobs();
    } catch (error) { toast(`${error.code}: ${error.message}`, "error"); }
  } }, "Create backup");
  const toTime = h("button", { id: "restore-to-time", "data-write": true, onclick: async () => {
    const request = { SourceTableName: table.TableName, TargetTableName: restoreName.value.trim() };
    const text = restoreTime.value.trim();
    if (text) {
      const millis = Date.parse(text);
      if (Number.isNaN(millis)) { toast("The restore time is not a date and time", "error"); return; }
      request.RestoreDateTime = millis / 1000;
    } else request.UseLatestRestorableTime = true;
    try { restored(await call("RestoreTableToPointInTime", request)); } catch (error) { toast(`${error.code}: ${error.message}`, "error"); }
  } }, "Restore to a time");
  refresh();
  return h("div", { class: "card stack", id: "backups-card" }, h("h2", {}, "Backups"),
    h("div", { class: "qform" }, field("Backup name", backupName), h("div", { class: "btn-row" }, create)),
    h("div", { class: "table-wrap" }, h("table", { class: "grid", id: "backups-grid" },
      h("thead", {}, h("tr", {}, ["Backup", "Created", "Size", ""].map((name) => h("th", {}, name)))), rows)), note,
    h("div", { class: "qform" }, field("Restore into table", restoreName), field("Time", restoreTime), h("div", { class: "btn-row" }, toTime)), pitrWindow, jobs);
}
