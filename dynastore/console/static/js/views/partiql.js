// PartiQL: an editor offering the table's attribute names as you type, run with
// Ctrl+Enter (ExecuteStatement through the console's one request path, so signing and
// the region work as for every call), paged results (NextToken), consumed capacity, a
// warning before a statement that will scan, a history, and the request as code.

import { call, capacityText, consoleConfig, describeTable, listAllTables } from "../api.js";
import { checkWire, primaryKeyOf } from "../ddb.js";
import { go, itemHash, setPageKeys } from "../nav.js";
import { executeStatementRequest, STATEMENT_GENERATORS } from "../partiql/code.js";
import { applyCompletion, completionsAt, vocabularyOf } from "../partiql/complete.js";
import { loadHistory, remember, saveHistory } from "../partiql/history.js";
import { analyzeStatement, partitionKeyLookup, scanVerdict } from "../partiql/scan.js";
import { clear, copyText, field, h, modal, spinner } from "../ui.js";
import { itemsTable } from "./browse.js";
import { session } from "../session.js";

/** Items read once to learn attribute names beyond the keys (a Scan with this Limit). */
export const SAMPLE_SIZE = 25;
const states = new Map();

function stateFor(tableName) {
  if (!states.has(tableName)) {
    states.set(tableName, { statement: `SELECT * FROM "${tableName.replace(/"/g, '""')}"`, parameters: "", limit: "", consistent: false,
      ran: null, tokens: [null], page: 0 });
  }
  return states.get(tableName);
}

/** Opens the PartiQL tab on ``statement`` (from the expression builder). */
export function presetStatement(tableName, { statement, parameters = [], limit = "" }) {
  const state = stateFor(tableName);
  Object.assign(state, { statement, parameters: parameters.length ? JSON.stringify(parameters, null, 1) : "", limit: limit ? String(limit) : "", ran: null, tokens: [null], page: 0 });
}

/** localStorage, or null where the browser refuses it (reading the property itself can throw). */
function browserStorage() {
  try { return window.localStorage; } catch { return null; }
}

/** The Parameters box: empty, or a JSON list of DynamoDB JSON values. */
export function parseParameters(text) {
  if (!text.trim()) return [];
  let list;
  try { list = JSON.parse(text); } catch (error) { throw new Error(`Parameters are not JSON: ${error.message}`); }
  if (!Array.isArray(list)) throw new Error('Parameters are a JSON list of DynamoDB values, e.g. [{"S": "USER#1"}, {"N": "42"}]');
  list.forEach((value, index) => checkWire(value, `Parameters[${index}]`));
  return list;
}

export async function renderPartiql(body, tableName) {
  const table = await describeTable(tableName);
  const state = stateFor(tableName);
  Object.assign(state, { ran: null, tokens: [null], page: 0 });
  const { endpoint } = await consoleConfig();
  const tables = { [tableName]: table };
  const vocabulary = vocabularyOf(table);
  // The attribute names beyond the key schemas come from a small sample; the other
  // tables' names serve completion after FROM. Neither is needed to run anything.
  call("Scan", { TableName: tableName, Limit: SAMPLE_SIZE }).then((page) => Object.assign(vocabulary, vocabularyOf(table, page.Items || []), { tables: vocabulary.tables }), () => {});
  listAllTables().then((names) => { vocabulary.tables = names; showVerdict(); }, () => {});

  const editor = h("textarea", { id: "partiql-editor", class: "mono partiql-editor", spellcheck: "false", autocomplete: "off", "data-focus": true,
    "aria-label": "PartiQL statement", "aria-autocomplete": "list", "aria-controls": "partiql-complete", rows: 6 });
  editor.value = state.statement;
  const popup = h("ul", { id: "partiql-complete", class: "completion", role: "listbox", hidden: true });
  const verdictPill = h("div", { id: "partiql-scan", class: "scan-verdict" });
  const params = h("textarea", { id: "partiql-params", class: "mono", rows: 1, spellcheck: "false", placeholder: '[{"S": "USER#1"}]  — one value per ? in order' });
  params.value = state.parameters;
  const limit = h("input", { id: "partiql-limit", type: "number", min: "1", class: "mono", value: state.limit, placeholder: "none", style: { width: "100px" } });
  const consistent = h("input", { id: "partiql-consistent", type: "checkbox", checked: state.consistent });
  const problem = h("p", { class: "error-text", id: "partiql-problem" });
  const result = h("div", { id: "partiql-result" });
  const historyList = h("div", { class: "history-list", id: "partiql-history" });

  const keyOf = partitionKeyLookup(tables);
  const showVerdict = () => {
    const verdict = scanVerdict(editor.value, keyOf);
    if (verdict.scans === null && verdict.verb === "SELECT" && verdict.table && !(verdict.table in tables) && vocabulary.tables.includes(verdict.table)) {
      // A SELECT of another existing table (not a name half typed): learn its key schema, then judge again.
      const name = verdict.table;
      tables[name] = null;
      describeTable(name).then((other) => { tables[name] = other; showVerdict(); }, () => { delete tables[name]; });
    }
    verdictPill.className = `scan-verdict pill ${verdict.scans ? "warn" : verdict.scans === false ? "ok" : ""}`;
    verdictPill.dataset.scans = String(verdict.scans);
    verdictPill.textContent = verdict.scans ? `Scan — ${verdict.reason}` : verdict.scans === false ? `Query — ${verdict.reason}` : verdict.reason || "Type a statement.";
    return verdict;
  };
  // A statement about another table is offered that table's key attributes (its items are not sampled).
  const vocabularyNow = () => {
    const other = tables[analyzeStatement(editor.value).table];
    return other && other !== table ? { ...vocabulary, attributes: vocabularyOf(other).attributes } : vocabulary;
  };
  const completion = completer(editor, popup, vocabularyNow, () => { state.statement = editor.value; showVerdict(); });

  const readForm = () => {
    state.statement = editor.value;
    state.parameters = params.value;
    state.limit = limit.value;
    state.consistent = consistent.checked;
    return executeStatementRequest(editor.value.trim(), { parameters: parseParameters(params.value), limit: limit.value, consistentRead: consistent.checked });
  };
  const storage = browserStorage();
  const history = { list: loadHistory(storage) };
  const drawHistory = () => clear(historyList, history.list.length ? history.list.map((entry) => h("button", {
    class: "history-entry", title: entry.statement, onclick: () => {
      editor.value = entry.statement;
      params.value = entry.parameters && entry.parameters.length ? JSON.stringify(entry.parameters, null, 1) : "";
      state.statement = editor.value; state.parameters = params.value;
      showVerdict();
      editor.focus();
    },
  }, h("span", { class: "mono statement" }, entry.statement), h("span", { class: "faint when" }, `${entry.table} · ${new Date(entry.at).toLocaleString()}`)))
    : h("p", { class: "muted" }, "Statements you run are kept here (in this browser's localStorage)."));

  const run = async () => {
    completion.close();
    problem.textContent = "";
    let request;
    try { request = readForm(); } catch (error) { problem.textContent = error.message; return; }
    if (!request.Statement) { problem.textContent = "Type a statement first."; return; }
    let verdict = showVerdict();
    if (verdict.scans === null && verdict.verb === "SELECT" && verdict.table && !tables[verdict.table]) {
      // Run before the other table's key schema arrived: read it now, so a scan is still warned about.
      try { tables[verdict.table] = await describeTable(verdict.table); } catch { /* the server will say */ }
      verdict = showVerdict();
    }
    if (verdict.scans) {
      const proceed = await modal({ title: "This statement will scan", body: h("div", { class: "stack", id: "partiql-scan-warning" },
        h("p", {}, verdict.reason),
        h("p", { class: "muted" }, "A Scan reads every item of the table or index (1 MB per page) and consumes read capacity for all of them, whatever the WHERE clause keeps. Fix the partition key with = or IN to run a Query instead.")),
      actions: [["Cancel", false], ["Run the scan", true, "primary"]] });
      if (proceed !== true) return;
    }
    history.list = remember(history.list, { statement: request.Statement, parameters: request.Parameters || [], table: tableName, at: Date.now() });
    saveHistory(storage, history.list);
    drawHistory();
    state.ran = request;
    state.tokens = [null];
    await runPage(0);
  };
  let latest = 0;
  const runPage = async (page) => {
    const mine = ++latest; // an answer that arrives after a newer run started is dropped
    state.page = page;
    const request = { ...state.ran, ReturnConsumedCapacity: "TOTAL" };
    if (state.tokens[page]) request.NextToken = state.tokens[page];
    clear(result, h("div", { class: "results-head" }, spinner(), h("span", { class: "muted" }, "Running…")));
    const started = performance.now();
    let response;
    try {
      response = await call("ExecuteStatement", request);
    } catch (error) {
      if (mine !== latest) return;
      clear(result, h("div", { class: "card" }, h("div", { class: "error-text", id: "partiql-error" }, `${error.code}: ${error.message}`)));
      return;
    }
    if (mine !== latest) return;
    drawResponse(result, response, performance.now() - started, state, tables, table, runPage);
  };

  const showCode = () => {
    let request;
    try { request = readForm(); } catch (error) { problem.textContent = error.message; return; }
    const code = h("pre", { class: "codeblock", id: "partiql-code-text" });
    const tabs = h("div", { class: "code-tabs" });
    const show = (index) => {
      code.textContent = STATEMENT_GENERATORS[index][1](request, endpoint, session.region);
      [...tabs.children].forEach((button, i) => button.classList.toggle("active", i === index));
    };
    STATEMENT_GENERATORS.forEach(([label], index) => tabs.append(h("button", { class: "small", onclick: () => show(index) }, label)));
    show(0);
    modal({ title: "ExecuteStatement as code", wide: true, body: h("div", {}, tabs, code),
      actions: [["Copy", () => { copyText(code.textContent); return undefined; }], ["Close", null, "primary"]] });
  };

  body.append(h("div", { class: "partiql-grid" },
    h("div", { class: "card stack", id: "partiql-form" },
      h("div", { class: "editor-wrap" }, editor, popup),
      verdictPill,
      field("Parameters (DynamoDB JSON, one per ?)", params),
      h("div", { class: "row" }, field("Limit (items evaluated)", limit),
        h("label", { class: "row center check" }, consistent, "ConsistentRead")),
      problem,
      h("div", { class: "btn-row" },
        h("button", { class: "primary", id: "partiql-run", title: "Ctrl+Enter", onclick: run }, "Run"),
        h("button", { id: "partiql-copy-code", onclick: showCode }, "Copy as code"),
        h("span", { class: "hint" }, "Ctrl+Enter runs · Ctrl+Space completes · Tab or Enter takes a suggestion"))),
    h("div", { class: "card stack partiql-history" },
      h("div", { class: "row center" }, h("h2", { style: { margin: 0 } }, "History"), h("div", { class: "spacer" }),
        h("button", { class: "small ghost", id: "partiql-history-clear", onclick: () => { history.list = []; saveHistory(storage, []); drawHistory(); } }, "Clear")),
      historyList),
    result));
  drawHistory();
  showVerdict();
  setPageKeys((event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { run(); return true; }
    if (!state.ran || event.target === editor || /^(INPUT|TEXTAREA|SELECT)$/.test(event.target.tagName)) return false;
    if (event.key === "n" && state.tokens[state.page + 1]) { runPage(state.page + 1); return true; }
    if (event.key === "p" && state.page > 0) { runPage(state.page - 1); return true; }
    return false;
  });
  // Coming back to the tab keeps the statement but does not run it again: it may write, or scan.
}

function drawResponse(result, response, ms, state, tables, table, runPage) {
  const items = response.Items || [];
  if (response.NextToken) state.tokens[state.page + 1] = response.NextToken;
  else state.tokens.length = state.page + 1;
  const capacity = capacityText(response.ConsumedCapacity);
  const target = tables[analyzeStatement(state.ran.Statement).table] || table;
  const hasKey = (item) => target.KeySchema.every((key) => key.AttributeName in item);
  const open = (item) => { if (hasKey(item)) go(itemHash(target.TableName, primaryKeyOf(target, item))); };
  clear(result, h("div", { class: "card" },
    h("div", { class: "results-head" },
      h("span", { class: "pill accent", id: "partiql-count" }, `${items.length} item${items.length === 1 ? "" : "s"}`),
      capacity ? h("span", { class: "pill ok", id: "partiql-capacity", title: "ConsumedCapacity (ReturnConsumedCapacity TOTAL)" }, capacity) : null,
      h("span", { class: "pill" }, `${ms.toFixed(0)} ms`),
      h("span", { class: "muted", id: "partiql-page" }, `page ${state.page + 1}${response.NextToken ? "" : " (last)"}`),
      h("div", { class: "pager" },
        h("button", { id: "partiql-prev", disabled: state.page === 0, title: "p", onclick: () => runPage(state.page - 1) }, "← Previous"),
        h("button", { id: "partiql-next", disabled: !response.NextToken, title: "n", onclick: () => runPage(state.page + 1) }, "Next →"))),
    items.length ? itemsTable(target, items, "", open)
      : h("p", { class: "muted", id: "partiql-empty" }, response.NextToken ? "No items on this page matched — try Next."
        : analyzeStatement(state.ran.Statement).verb === "SELECT" ? "No items." : "Done. A write returns no items unless it ends with RETURNING (e.g. RETURNING ALL NEW *).")));
}

/** The completion popup of ``editor``: as you type, Ctrl+Space, arrows, Tab/Enter, Escape. */
function completer(editor, popup, currentVocabulary, changed) {
  const open = { completion: null, selected: 0 };
  const close = () => { open.completion = null; popup.hidden = true; clear(popup); };
  const draw = () => {
    const { completion, selected } = open;
    clear(popup, completion.items.map((item, index) => h("li", {
      role: "option", class: `${index === selected ? "selected " : ""}kind-${item.kind}`, "aria-selected": String(index === selected),
      onmousedown: (event) => { event.preventDefault(); accept(index); },
    }, h("span", { class: "mono" }, item.label), h("span", { class: "faint kind" }, item.kind))));
    const { top, left } = caretOffset(editor);
    Object.assign(popup.style, { top: `${top}px`, left: `${left}px` });
    popup.hidden = false;
  };
  const suggest = (explicit) => {
    const completion = completionsAt(editor.value, editor.selectionStart, currentVocabulary(), { explicit });
    if (!completion || editor.selectionStart !== editor.selectionEnd) { close(); return; }
    open.completion = completion;
    open.selected = 0;
    draw();
  };
  const accept = (index) => {
    const next = applyCompletion(editor.value, open.completion, open.completion.items[index]);
    editor.value = next.text;
    editor.setSelectionRange(next.cursor, next.cursor);
    close();
    changed();
    editor.focus();
  };
  editor.addEventListener("input", () => { changed(); suggest(false); });
  editor.addEventListener("blur", () => setTimeout(close, 100));
  editor.addEventListener("keydown", (event) => {
    if (event.key === " " && event.ctrlKey) { event.preventDefault(); suggest(true); return; }
    if (!open.completion) return;
    const count = open.completion.items.length;
    if (event.key === "ArrowDown") open.selected = (open.selected + 1) % count;
    else if (event.key === "ArrowUp") open.selected = (open.selected + count - 1) % count;
    else if ((event.key === "Enter" || event.key === "Tab") && !event.ctrlKey && !event.metaKey) { event.preventDefault(); event.stopPropagation(); accept(open.selected); return; }
    else if (event.key === "Escape") { event.stopPropagation(); close(); return; }
    else return;
    event.preventDefault();
    draw();
  });
  return { close };
}

/** Where the caret is inside ``textarea``, in pixels from its top left (a mirror element measures it). */
function caretOffset(textarea) {
  const style = getComputedStyle(textarea);
  const mirror = document.createElement("div");
  for (const name of ["fontFamily", "fontSize", "fontWeight", "lineHeight", "letterSpacing", "paddingTop", "paddingLeft", "paddingRight", "borderTopWidth", "borderLeftWidth", "tabSize"]) mirror.style[name] = style[name];
  Object.assign(mirror.style, { position: "absolute", visibility: "hidden", whiteSpace: "pre-wrap", overflowWrap: "break-word", width: `${textarea.clientWidth}px`, top: "0", left: "0" });
  mirror.textContent = textarea.value.slice(0, textarea.selectionStart);
  const marker = document.createElement("span");
  marker.textContent = "\u200b";
  mirror.append(marker);
  textarea.parentNode.append(mirror);
  const lineHeight = parseFloat(style.lineHeight) || 18;
  const top = marker.offsetTop - textarea.scrollTop + lineHeight + 4;
  const left = Math.min(marker.offsetLeft, Math.max(0, textarea.clientWidth - 260));
  mirror.remove();
  return { top, left };
}
