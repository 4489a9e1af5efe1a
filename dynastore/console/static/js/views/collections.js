// Single-table view: items grouped by partition key (item collections), the entity type
// of each item from its sort-key prefix (USER#, ORDER#), and a finder for a fixed key
// such as the singleton PK=SETTINGS#APP / SK=FLAGS#V1.

import { call, capacityText, describeTable } from "../api.js";
import { attributeType, cellText, entityTypeOf, keySchemaOf, keyText, primaryKeyOf, typedValue, typeOf } from "../ddb.js";
import { ExpressionBuilder, keyConditionExpression } from "../expr.js";
import { go, itemHash, setPageKeys, tableHash } from "../nav.js";
import { presetQuery } from "./browse.js";
import { clear, entityColor, field, h, spinner } from "../ui.js";

const PAGE_SIZE = 100;
const SUMMARY_ATTRIBUTES = 6;
const states = new Map();

export async function renderCollections(body, tableName) {
  const table = await describeTable(tableName);
  const keys = keySchemaOf(table);
  if (!states.has(tableName)) states.set(tableName, { partition: "", pages: [null], page: 0 });
  const state = states.get(tableName);
  const results = h("div", { id: "collections" });
  const finder = keyFinder(table, keys);
  const partitionInput = h("input", { class: "mono", id: "partition-filter", value: state.partition, placeholder: `${keys.hash} value (empty: scan all)` });
  const load = (page) => loadPage(table, keys, state, results, page);
  body.append(finder,
    h("div", { class: "card" }, h("div", { class: "row" },
      field("Show one item collection", partitionInput),
      h("button", { class: "primary", onclick: () => { state.partition = partitionInput.value; state.pages = [null]; load(0); } }, "Show"),
      h("span", { class: "hint" }, "Items are grouped by partition key; the badge is the entity type taken from the sort key's prefix."))),
    results);
  setPageKeys((event, typing) => {
    if (typing || event.ctrlKey || event.metaKey) return false;
    if (event.key === "n") { results.querySelector("#coll-next:not([disabled])")?.click(); return true; }
    if (event.key === "p") { results.querySelector("#coll-prev:not([disabled])")?.click(); return true; }
    return false;
  });
  await load(state.page);
}

function keyFinder(table, keys) {
  const pk = h("input", { class: "mono", id: "find-pk", "data-focus": true, placeholder: "e.g. SETTINGS#APP" });
  const sk = keys.range ? h("input", { class: "mono", id: "find-sk", placeholder: "e.g. FLAGS#V1" }) : null;
  const message = h("div", { id: "find-result" });
  const find = async () => {
    let key;
    try {
      key = { [keys.hash]: typedValue(attributeType(table, keys.hash), pk.value, keys.hash) };
      if (keys.range) key[keys.range] = typedValue(attributeType(table, keys.range), sk.value, keys.range);
    } catch (error) { clear(message, h("span", { class: "error-text" }, error.message)); return; }
    try {
      const response = await call("GetItem", { TableName: table.TableName, Key: key, ReturnConsumedCapacity: "TOTAL" });
      if (response.Item) go(itemHash(table.TableName, key));
      else clear(message, h("span", { class: "muted" }, "No item has this key. "), h("a", { href: itemHash(table.TableName, key), id: "find-create" }, "Create it"));
    } catch (error) { clear(message, h("span", { class: "error-text" }, `${error.code}: ${error.message}`)); }
  };
  const onEnter = (event) => { if (event.key === "Enter") find(); };
  pk.addEventListener("keydown", onEnter);
  if (sk) sk.addEventListener("keydown", onEnter);
  return h("div", { class: "card" }, h("h2", {}, "Find an item by its key"),
    h("div", { class: "row" }, field(`${keys.hash} (${attributeType(table, keys.hash)})`, pk),
      sk ? field(`${keys.range} (${attributeType(table, keys.range)})`, sk) : null,
      h("button", { class: "primary", id: "find-go", onclick: find }, "Open"), message));
}

async function loadPage(table, keys, state, results, page) {
  state.page = page;
  clear(results, h("p", {}, spinner(), " Reading…"));
  const request = { TableName: table.TableName, Limit: PAGE_SIZE, ReturnConsumedCapacity: "TOTAL" };
  let operation = "Scan";
  try {
    if (state.partition) {
      const builder = new ExpressionBuilder();
      request.KeyConditionExpression = keyConditionExpression(builder, { hash: keys.hash, hashValue: typedValue(attributeType(table, keys.hash), state.partition, keys.hash) });
      Object.assign(request, builder.params());
      operation = "Query";
    }
    if (state.pages[page]) request.ExclusiveStartKey = state.pages[page];
    const response = await call(operation, request);
    drawGroups(table, keys, state, results, response, (next) => loadPage(table, keys, state, results, next));
  } catch (error) {
    clear(results, h("div", { class: "card error-text" }, `${error.code || error.name}: ${error.message}`));
  }
}

function drawGroups(table, keys, state, results, response, load) {
  const items = response.Items || [];
  const groups = new Map();
  const entityCounts = new Map();
  for (const item of items) {
    const partition = keyText(item[keys.hash]);
    if (!groups.has(partition)) groups.set(partition, []);
    groups.get(partition).push(item);
    const entity = entityTypeOf(item, keys.hash, keys.range) || "—";
    entityCounts.set(entity, (entityCounts.get(entity) || 0) + 1);
  }
  const next = h("button", { id: "coll-next", disabled: !response.LastEvaluatedKey, onclick: () => { state.pages[state.page + 1] = response.LastEvaluatedKey; load(state.page + 1); } }, "Next →");
  const previous = h("button", { id: "coll-prev", disabled: state.page === 0, onclick: () => load(state.page - 1) }, "← Previous");
  clear(results,
    h("div", { class: "results-head" },
      h("span", { class: "pill accent" }, `${groups.size} partitions · ${items.length} items`),
      response.ConsumedCapacity ? h("span", { class: "pill ok" }, capacityText(response.ConsumedCapacity)) : null,
      h("div", { class: "legend" }, [...entityCounts].map(([entity, count]) => h("span", { class: "pill" }, entityBadge(entity), ` ${count}`))),
      h("div", { class: "pager" }, previous, next)),
    items.length ? [...groups].map(([partition, members]) => groupCard(table, keys, partition, members)) : h("div", { class: "card empty" }, "No items."));
}

function entityBadge(entity) {
  return entity === "—" ? h("span", { class: "faint" }, "no type") : h("span", { class: "entity", style: { background: entityColor(entity) } }, entity);
}

function groupCard(table, keys, partition, items) {
  const rows = items.map((item) => {
    const others = Object.keys(item).filter((name) => name !== keys.hash && name !== keys.range);
    const summary = others.slice(0, SUMMARY_ATTRIBUTES).map((name) => h("span", { style: { marginRight: "14px" } },
      h("span", { class: "muted" }, `${name}=`), h("span", { class: `t-${typeOf(item[name])}` }, cellText(item[name], 40))));
    return h("tr", { onclick: () => go(itemHash(table.TableName, primaryKeyOf(table, item))) },
      keys.range ? h("td", { class: "cell" }, keyText(item[keys.range])) : null,
      h("td", {}, entityBadge(entityTypeOf(item, keys.hash, keys.range) || "—")),
      h("td", { class: "cell" }, summary, others.length > SUMMARY_ATTRIBUTES ? h("span", { class: "faint" }, `+${others.length - SUMMARY_ATTRIBUTES} more`) : null));
  });
  return h("div", { class: "group", dataset: { partition } },
    h("div", { class: "group-head" }, h("span", { class: "muted" }, `${keys.hash} =`), h("strong", {}, partition), h("span", { class: "count" }, `${items.length} item${items.length === 1 ? "" : "s"}`),
      h("button", { class: "small ghost", title: "Query this partition on the Items page", onclick: () => { presetQuery(table.TableName, partition); go(tableHash(table.TableName)); } }, "Query"),
      h("button", { class: "small ghost", "data-write": true, title: "New item in this partition", onclick: () => go(tableHash(table.TableName, "item", `new=1&pk=${encodeURIComponent(partition)}`)) }, "+ Item")),
    h("table", { class: "grid" }, h("thead", {}, h("tr", {}, keys.range ? h("th", { class: "key" }, keys.range) : null, h("th", {}, "Entity"), h("th", {}, "Attributes"))), h("tbody", {}, rows)));
}
