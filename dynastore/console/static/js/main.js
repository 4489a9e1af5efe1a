// The console's shell: hash router, sidebar of tables, status bar, keyboard shortcuts, theme.

import { call, capacityText, consoleConfig, describeTable, fetchIdentity, forgetAllTables, listAllTables, onCall } from "./api.js";
import { go, hooks, tableHash } from "./nav.js";
import { initSession, session, setCredentials, setRegion, signOut, validRegion } from "./session.js";
import { clear, field, formatBytes, formatCount, h, modal, modalOpen, setReadonly } from "./ui.js";
import { renderBrowse } from "./views/browse.js";
import { renderBuilder } from "./views/builder.js";
import { renderCapacity } from "./views/capacity.js";
import { renderReplicas } from "./views/replicas.js";
import { renderCollections } from "./views/collections.js";
import { renderImportExport } from "./views/io.js";
import { renderItem } from "./views/item.js";
import { renderPartiql } from "./views/partiql.js";
import { renderRedis } from "./views/redis.js";
import { renderCreateTable, renderOverview, renderTableList } from "./views/tables.js";

const view = document.getElementById("view");
const sidebar = document.getElementById("sidebar");
const crumbs = document.getElementById("crumbs");
const statusBar = document.getElementById("status-bar");

const TABLE_TABS = [
  ["items", "Items"], ["collections", "Single-table"], ["builder", "Expression builder"], ["overview", "Overview"], ["io", "Import / Export"], ["capacity", "Capacity"], ["replicas", "Replicas"], ["partiql", "PartiQL"],
];


function route() {
  const raw = location.hash.slice(1) || "/";
  const [path, query = ""] = raw.split("?");
  return { parts: path.split("/").filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(query) };
}

let renderToken = 0;
let ready = false; // false while the sign-in form is shown
async function render() {
  if (!ready) return;
  const { parts, params } = route();
  const token = ++renderToken;
  hooks.pageKeys = null;
  clear(view);
  view.scrollTop = 0;
  const table = parts[0] === "t" ? parts[1] : null;
  setCrumbs(parts);
  highlightSidebar(table);
  try {
    if (!parts.length) await renderTableList(view);
    else if (parts[0] === "create") await renderCreateTable(view);
    else if (parts[0] === "redis") await renderRedis(view);
    else if (table) await renderTablePage(table, parts[2] || "items", params);
    else clear(view, h("div", { class: "empty" }, "Nothing here. ", h("a", { href: "#/" }, "Back to tables")));
  } catch (error) {
    if (token !== renderToken) return;
    clear(view, h("div", { class: "card" }, h("h2", {}, "Could not load this page"), h("p", { class: "error-text" }, `${error.code || error.name}: ${error.message}`),
      h("div", { class: "btn-row" }, h("button", { onclick: render }, "Retry"), h("a", { href: "#/" }, "Back to tables"))));
  }
}

async function renderTablePage(table, tab, params) {
  const renderers = { items: renderBrowse, collections: renderCollections, builder: renderBuilder, overview: renderOverview, io: renderImportExport, capacity: renderCapacity, replicas: renderReplicas, partiql: renderPartiql, item: renderItem };
  const renderer = renderers[tab] || renderBrowse;
  const head = h("div", { class: "page-head" }, h("h1", {}, table));
  const tabs = h("nav", { class: "tabs", "aria-label": "Table views" },
    TABLE_TABS.map(([id, label], index) => h("a", { href: tableHash(table, id), class: id === tab ? "active" : "", title: `${label} (${index + 1})` }, label)));
  const body = h("div", {});
  view.append(head, tabs, body);
  describeTable(table).then((description) => head.append(...tableFacts(description)), () => {});
  await renderer(body, table, params, head);
}

function tableFacts(table) {
  const key = (type) => {
    const entry = table.KeySchema.find((k) => k.KeyType === type);
    if (!entry) return null;
    const definition = table.AttributeDefinitions.find((d) => d.AttributeName === entry.AttributeName);
    return `${entry.AttributeName}:${definition ? definition.AttributeType : "?"}`;
  };
  const billing = table.BillingModeSummary?.BillingMode === "PAY_PER_REQUEST" ? "on-demand" : "provisioned";
  return [
    h("span", { class: "pill accent", title: "Primary key" }, [key("HASH"), key("RANGE")].filter(Boolean).join(" · ")),
    h("span", { class: "pill", title: "ItemCount (as DescribeTable reports it)" }, `${formatCount(table.ItemCount)} items`),
    h("span", { class: "pill", title: "TableSizeBytes" }, formatBytes(table.TableSizeBytes)),
    h("span", { class: "pill" }, billing),
  ];
}

function setCrumbs(parts) {
  const items = [h("a", { href: "#/" }, "Tables")];
  if (parts[0] === "create") items.push(h("span", { class: "sep" }, "/"), h("span", {}, "New table"));
  if (parts[0] === "redis") items.push(h("span", { class: "sep" }, "/"), h("span", {}, "Redis"));
  if (parts[0] === "t") {
    items.push(h("span", { class: "sep" }, "/"), h("a", { href: tableHash(parts[1]) }, parts[1]));
    const tab = TABLE_TABS.find(([id]) => id === parts[2]);
    if (parts[2] === "item") items.push(h("span", { class: "sep" }, "/"), h("span", {}, "Item"));
    else if (tab) items.push(h("span", { class: "sep" }, "/"), h("span", {}, tab[1]));
  }
  clear(crumbs, items);
}

// --- sidebar -----------------------------------------------------------------------------
let tableNames = [];
let sidebarFilter = "";
async function refreshSidebar() {
  if (!ready) return;
  try {
    tableNames = await listAllTables();
  } catch (error) {
    tableNames = [];
    clear(sidebar, h("div", { class: "error-text", id: "sidebar-error" }, `Cannot list tables: ${error.code}: ${error.message}`));
    return;
  }
  drawSidebar();
}

function drawSidebar() {
  const current = route().parts[0] === "t" ? route().parts[1] : null;
  const filter = h("input", { type: "search", placeholder: "Filter tables", value: sidebarFilter, "aria-label": "Filter tables",
    oninput: (event) => { sidebarFilter = event.target.value; drawList(); } });
  const list = h("nav", {});
  const drawList = () => clear(list, tableNames.filter((name) => name.toLowerCase().includes(sidebarFilter.toLowerCase()))
    .map((name) => h("a", { href: tableHash(name), class: name === current ? "active" : "", title: name }, name)));
  drawList();
  clear(sidebar,
    h("button", { class: "primary", id: "new-table", "data-write": true, onclick: () => go("#/create") }, "+ New table"),
    h("a", { href: "#/redis", id: "redis-link", class: "side-link" }, "Redis keys"),
    filter,
    h("div", { class: "side-title" }, h("span", {}, `Tables (${tableNames.length})`), h("button", { class: "ghost small", title: "Refresh", onclick: refreshSidebar }, "↻")),
    list);
}

function highlightSidebar(table) {
  for (const link of sidebar.querySelectorAll("nav a")) link.classList.toggle("active", link.textContent === table);
}

// --- status bar ----------------------------------------------------------------------------
onCall(({ operation, ms, data, error, probe }) => {
  const capacity = data ? capacityText(data.ConsumedCapacity) : null;
  clear(statusBar,
    h("span", {}, operation),
    h("span", {}, `${ms.toFixed(0)} ms`),
    capacity ? h("span", {}, capacity) : null,
    error && probe ? h("span", { class: "faint" }, `validation probe answered ${error.code}`)
      : error ? h("span", { class: "err" }, `${error.code}: ${error.message}`) : h("span", { class: "faint" }, "ok"));
});

// --- theme and keyboard --------------------------------------------------------------------
function toggleTheme() {
  const next = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
  document.documentElement.dataset.theme = next;
  try { localStorage.setItem("dynastore.theme", next); } catch { /* private mode */ }
}

const SHORTCUTS = [
  ["/", "Focus the search / key finder"], ["1 – 8", "Switch table tab"], ["j / k", "Next / previous row"], ["Enter", "Open the selected item"],
  ["n / p", "Next / previous page"], ["Ctrl+Enter", "Run the query or expression"], ["Ctrl+S", "Save the item being edited"],
  ["g t", "Go to the tables list"], ["Shift+D", "Toggle dark mode"], ["Esc", "Close a dialog"], ["?", "This help"],
];

function showHelp() {
  modal({ title: "Keyboard shortcuts", body: h("table", { class: "plain shortcuts" }, SHORTCUTS.map(([keys, what]) => h("tr", {}, h("td", {}, h("kbd", {}, keys)), h("td", {}, what)))) });
}

let lastKey = "";
document.addEventListener("keydown", (event) => {
  if (modalOpen()) return;
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(event.target.tagName);
  if (hooks.pageKeys && hooks.pageKeys(event, typing)) { event.preventDefault(); return; }
  if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
  const { parts } = route();
  if (event.key === "?") showHelp();
  else if (event.key === "D" && event.shiftKey) toggleTheme();
  else if (event.key === "/") {
    const target = view.querySelector("[data-focus]") || view.querySelector("input, textarea");
    if (target) { target.focus(); event.preventDefault(); }
  } else if (event.key === "t" && lastKey === "g") go("#/");
  else if (/^[1-8]$/.test(event.key) && parts[0] === "t") go(tableHash(parts[1], TABLE_TABS[Number(event.key) - 1][0]));
  lastKey = event.key;
});

document.getElementById("theme-toggle").addEventListener("click", toggleTheme);
document.getElementById("help-toggle").addEventListener("click", showHelp);
window.addEventListener("hashchange", render);
hooks.render = render;
hooks.refreshSidebar = refreshSidebar;

// --- identity, region and sign-in ------------------------------------------------------------
const who = document.getElementById("who");
const regionSelect = document.getElementById("region-select");
const signOutButton = document.getElementById("signout");
const OTHER_REGION = "__other__";

function drawIdentity() {
  const identity = session.identity || {};
  const regions = [...new Set([...(identity.regions || []), session.region])].sort();
  clear(regionSelect, regions.map((region) => h("option", { value: region, selected: region === session.region }, region)),
    h("option", { value: OTHER_REGION }, "Other region…"));
  regionSelect.hidden = false;
  const parts = [];
  if (identity.account) parts.push(h("span", { class: "faint" }, "account"), h("span", { id: "who-account", title: "Account" }, identity.account));
  if (identity.accessKeyId) parts.push(h("span", { class: "faint" }, "key"), h("span", { id: "who-key", title: "Access key id" }, identity.accessKeyId));
  if (identity.readonly) parts.push(h("span", { class: "pill warn", id: "who-readonly", title: "This key can read but not write" }, "read-only"));
  clear(who, parts);
  who.hidden = !parts.length;
  signOutButton.hidden = !session.signin;
  setReadonly(Boolean(identity.readonly));
}

async function askRegion() {
  const input = h("input", { id: "region-input", class: "mono", placeholder: "eu-west-1", spellcheck: "false", autocomplete: "off" });
  const problem = h("p", { class: "error-text", id: "region-problem" });
  const accept = () => {
    const region = input.value.trim();
    if (validRegion(region)) return region;
    input.classList.add("invalid");
    problem.textContent = "A region name looks like us-east-1 or eu-central-2.";
    return undefined;
  };
  input.addEventListener("keydown", (event) => { if (event.key === "Enter") document.querySelector(".modal button[data-action='Switch']")?.click(); });
  return modal({ title: "Another region", body: h("div", { class: "stack" }, field("Region", input, "Tables live per account and region."), problem),
    actions: [["Cancel", null], ["Switch", accept, "primary"]] });
}

async function switchRegion(region) {
  setRegion(region);
  forgetAllTables();
  await fetchIdentity();
  drawIdentity();
  await refreshSidebar();
  go("#/");
}

regionSelect.addEventListener("change", async () => {
  let region = regionSelect.value;
  if (region === OTHER_REGION) region = await askRegion();
  if (!region) { drawIdentity(); return; }
  await switchRegion(region);
});

signOutButton.addEventListener("click", () => {
  signOut();
  location.hash = "#/";
  location.reload();
});

function showSignin(message = "") {
  ready = false;
  clear(sidebar);
  clear(crumbs);
  regionSelect.hidden = true;
  who.hidden = true;
  signOutButton.hidden = true;
  const keyId = h("input", { id: "signin-key", class: "mono", autocomplete: "off", spellcheck: "false", required: true });
  const secret = h("input", { id: "signin-secret", class: "mono", type: "password", autocomplete: "off", required: true });
  const token = h("input", { id: "signin-token", class: "mono", type: "password", autocomplete: "off" });
  const region = h("input", { id: "signin-region", class: "mono", value: session.region, spellcheck: "false", autocomplete: "off" });
  const problem = h("p", { class: "error-text", id: "signin-error", role: "alert" }, message);
  const submit = h("button", { class: "primary", id: "signin-submit", type: "submit" }, "Sign in");
  const form = h("form", { class: "card stack signin", id: "signin-form", onsubmit: async (event) => {
    event.preventDefault();
    const chosen = region.value.trim();
    if (!validRegion(chosen)) { problem.textContent = "A region name looks like us-east-1 or eu-central-2."; return; }
    const credentials = { accessKeyId: keyId.value.trim(), secretAccessKey: secret.value };
    if (token.value.trim()) credentials.sessionToken = token.value.trim();
    if (!credentials.accessKeyId || !credentials.secretAccessKey) { problem.textContent = "Both the access key id and the secret are needed."; return; }
    submit.disabled = true;
    problem.textContent = "";
    setRegion(chosen);
    setCredentials(credentials, { remember: false });
    const answer = await fetchIdentity();
    submit.disabled = false;
    if (!answer.ok) {
      setCredentials(null);
      problem.textContent = `${answer.error.code}: ${answer.error.message}`;
      return;
    }
    setCredentials(credentials);
    start();
  } },
  h("h1", {}, "Sign in"),
  h("p", { class: "muted" }, "This server checks a SigV4 signature on every request. The key stays in this tab (sessionStorage) and signs each request here; the secret itself is never sent."),
  field("Access key id", keyId), field("Secret access key", secret), field("Session token", token, "optional"), field("Region", region), problem,
  h("div", { class: "btn-row" }, submit));
  clear(view, form);
  keyId.focus();
}

function start() {
  ready = true;
  drawIdentity();
  refreshSidebar();
  render();
}

async function boot() {
  const config = await consoleConfig();
  document.getElementById("endpoint").textContent = config.endpoint;
  initSession(config);
  if (session.signin && !session.credentials) { showSignin(); return; }
  const answer = await fetchIdentity();
  if (!answer.ok && session.signin) {
    signOut();
    showSignin(`${answer.error.code}: ${answer.error.message}`);
    return;
  }
  start();
}

boot();
window.dynastoreConsole = { call, go };
