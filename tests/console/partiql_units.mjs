// Unit tests of the PartiQL tab's pure modules (tokenizer, scan rule, completion,
// builder -> PartiQL, code generation, history), run by test_partiql_units.py with node:
// `node partiql_units.mjs STATIC_ROOT`. Prints "ok <count>" or throws.
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const root = resolve(process.argv[2]);
const load = (name) => import(pathToFileURL(`${root}/js/partiql/${name}`).href);
const lexer = await load("lexer.js");
const scan = await load("scan.js");
const complete = await load("complete.js");
const convert = await load("convert.js");
const code = await load("code.js");
const history = await load("history.js");
let count = 0;
const test = (name, body) => { try { body(); count += 1; } catch (error) { error.message = `${name}: ${error.message}`; throw error; } };

test("tokens: words, quoted names, strings, numbers, parameters, comments", () => {
  const tokens = lexer.tokenize(`SELECT "a""b", 'it''s' FROM t -- note\nWHERE x <= 1.5e3 AND y = ? /* c */ AND s = <<'a'>>`);
  const shape = tokens.map((t) => `${t.type}:${t.value}`);
  assert.deepEqual(shape, ["word:SELECT", 'quoted:a"b', "op:,", "string:it's", "word:FROM", "word:t", "word:WHERE", "word:x", "op:<=", "number:1.5e3",
    "word:AND", "word:y", "op:=", "param:?", "word:AND", "word:s", "op:=", "op:<<", "string:a", "op:>>"]);
  const open = lexer.tokenize(`SELECT "na`);
  assert.equal(open[1].open, true);
  assert.equal(open[1].value, "na");
});

// The scan rule, table-driven: [statement, scans?]. Table "app" has PK/SK, index "byStatus" is keyed on status.
const tables = {
  app: { TableName: "app", KeySchema: [{ AttributeName: "PK", KeyType: "HASH" }, { AttributeName: "SK", KeyType: "RANGE" }],
    GlobalSecondaryIndexes: [{ IndexName: "byStatus", KeySchema: [{ AttributeName: "status", KeyType: "HASH" }] }] },
};
const keyOf = scan.partitionKeyLookup(tables);
const SCAN_CASES = [
  [`SELECT * FROM "app"`, true],
  [`SELECT * FROM app WHERE PK = 'USER#1'`, false],
  [`select * from "app" where "PK" = ?`, false],
  [`SELECT * FROM "app" WHERE 'USER#1' = "PK"`, false],
  [`SELECT * FROM "app" WHERE "PK" IN ['a', 'b']`, false],
  [`SELECT * FROM "app" WHERE "PK" IN ?`, false],
  [`SELECT * FROM "app" WHERE "PK" = 'a' AND "SK" > 'x'`, false],
  [`SELECT * FROM "app" WHERE "total" > 3 AND "PK" = 'a'`, false],               // AND: one side suffices
  [`SELECT * FROM "app" WHERE "PK" = 'a' OR "PK" = 'b'`, false],                 // OR: every side fixes it
  [`SELECT * FROM "app" WHERE "PK" = 'a' OR "status" = 'x'`, true],              // OR: one side does not
  [`SELECT * FROM "app" WHERE ("PK" = 'a' OR "PK" = 'b') AND "SK" = 'c'`, false],
  [`SELECT * FROM "app" WHERE ("PK" = 'a' AND "x" = 1) OR ("PK" = 'b' AND "y" = 2)`, false],
  [`SELECT * FROM "app" WHERE ("PK" = 'a' AND "x" = 1) OR "y" = 2`, true],
  [`SELECT * FROM "app" WHERE NOT "PK" = 'a'`, true],
  [`SELECT * FROM "app" WHERE "PK" <> 'a'`, true],
  [`SELECT * FROM "app" WHERE "PK" > 'a'`, true],
  [`SELECT * FROM "app" WHERE "PK" NOT IN ['a']`, true],
  [`SELECT * FROM "app" WHERE begins_with("PK", 'USER')`, true],
  [`SELECT * FROM "app" WHERE "PK" = "SK"`, true],                              // another attribute, not a value
  [`SELECT * FROM "app" WHERE "pk" = 'a'`, true],                               // names are case-sensitive
  [`SELECT * FROM "app" WHERE "PK".x = 'a'`, true],
  [`SELECT * FROM "app" WHERE "SK" BETWEEN 'a' AND 'z' AND "PK" = 'u'`, false],  // BETWEEN's AND is not a conjunction
  [`SELECT * FROM "app" WHERE "SK" BETWEEN 'a' AND 'z' OR "PK" = 'u'`, true],
  [`SELECT * FROM "app" WHERE "PK" = 'a' ORDER BY "SK" DESC`, false],
  [`SELECT * FROM "app" ORDER BY "SK"`, true],
  [`SELECT * FROM "app"."byStatus" WHERE "status" = 'PENDING'`, false],          // the index's own partition key
  [`SELECT * FROM "app"."byStatus" WHERE "PK" = 'a'`, true],                     // the table's key scans the index
  [`SELECT * FROM "app" WHERE "PK" = -1`, false],
  [`SELECT * FROM "app" WHERE ((("PK" = 'a')))`, false],
  [`SELECT * FROM "app" WHERE "PK" = 'a' AND (`, true],                         // unreadable: warn
];
test("scan rule", () => {
  for (const [statement, scans] of SCAN_CASES) assert.equal(scan.scanVerdict(statement, keyOf).scans, scans, statement);
});

test("scan verdict: reasons, unknown tables, writes", () => {
  const verdict = scan.scanVerdict(`SELECT * FROM "app" WHERE "x" = 1`, keyOf);
  assert.equal(verdict.partitionKey, "PK");
  assert.match(verdict.reason, /does not fix the partition key "PK".*Scan of "app"/);
  assert.match(scan.scanVerdict(`SELECT * FROM "app"."byStatus"`, keyOf).reason, /Scan of index "byStatus" of "app"/);
  assert.equal(scan.scanVerdict(`SELECT * FROM "other"`, keyOf).scans, null);
  assert.equal(scan.scanVerdict(`SELECT * FROM "app"."nope"`, keyOf).scans, null);
  for (const write of [`UPDATE "app" SET a = 1 WHERE PK = 'a' AND SK = 'b'`, `DELETE FROM "app" WHERE x = 1`, `INSERT INTO "app" VALUE {'PK': 'a'}`]) {
    assert.equal(scan.scanVerdict(write, keyOf).scans, null, write);
  }
  assert.equal(scan.analyzeStatement(`SELECT a FROM "app"."byStatus" WHERE x = 1`).index, "byStatus");
});

const vocabulary = complete.vocabularyOf(
  { TableName: "app", KeySchema: tables.app.KeySchema, GlobalSecondaryIndexes: tables.app.GlobalSecondaryIndexes },
  [{ PK: {}, SK: {}, total: {}, status: {} }, { PK: {}, SK: {}, total: {} }, { PK: {}, SK: {}, "my-attr": {} }],
);
test("vocabulary: keys first, then the sample's attributes by frequency", () => {
  assert.deepEqual(vocabulary.attributes, ["PK", "SK", "status", "total", "my-attr"]);
  assert.deepEqual(vocabulary.indexes, { app: ["byStatus"] });
});

test("completion: attributes and keywords for the word typed", () => {
  const text = `SELECT * FROM "app" WHERE to`;
  const offered = complete.completionsAt(text, text.length, vocabulary);
  assert.equal(offered.from, text.length - 2);
  assert.deepEqual(offered.items.map((i) => i.label), ["total"]);
  assert.deepEqual(complete.applyCompletion(text, offered, offered.items[0]), { text: `SELECT * FROM "app" WHERE "total"`, cursor: text.length + 5 });
  const keywords = complete.completionsAt("SEL", 3, vocabulary);
  assert.deepEqual(keywords.items.map((i) => i.label), ["SELECT"]);
  const s = complete.completionsAt("SELECT s", 8, vocabulary).items.map((i) => i.label);
  assert.deepEqual(s, ["SK", "status", "size()", "set_add()", "set_delete()", "SELECT", "SET"]);
  assert.equal(complete.completionsAt("SELECT * FROM app WHERE my", 26, vocabulary).items[0].insert, '"my-attr"');
});

test("completion: inside a quoted name, table and index names, never inside a string", () => {
  const quoted = `SELECT * FROM "app" WHERE "sta`;
  const offered = complete.completionsAt(quoted, quoted.length, vocabulary);
  assert.deepEqual(offered.items.map((i) => i.label), ["status"]);
  assert.equal(complete.applyCompletion(quoted, offered, offered.items[0]).text, `SELECT * FROM "app" WHERE "status"`);
  const closed = `WHERE "sta" = 1`;
  const inside = complete.completionsAt(closed, 10, vocabulary);
  assert.equal(complete.applyCompletion(closed, { ...inside, to: inside.to }, inside.items[0]).text, `WHERE "status" = 1`);
  assert.deepEqual(complete.completionsAt("SELECT * FROM a", 15, vocabulary).items.map((i) => i.insert), ['"app"']);
  assert.deepEqual(complete.completionsAt('SELECT * FROM "app".', 20, vocabulary, { explicit: true }).items.map((i) => i.label), ["byStatus"]);
  assert.equal(complete.completionsAt(`SELECT * FROM "app" WHERE PK = 'US`, 34, vocabulary), null);
  assert.equal(complete.completionsAt("SELECT ", 7, vocabulary), null);                    // nothing typed yet
  assert.ok(complete.completionsAt("SELECT ", 7, vocabulary, { explicit: true }).items.length > 0); // Ctrl+Space
  assert.equal(complete.completionsAt("SELECT", 6, vocabulary), null);                     // already complete
});

// --- builder -> PartiQL ---------------------------------------------------------------------
test("a Query with a sort key condition, filters, projection, order and limit", () => {
  const result = convert.toPartiql({
    op: "Query", table: "app", index: "", limit: "25", forward: false, projection: ["total", "a.b[0]"],
    key: { hash: "PK", hashValue: { S: "USER#1" }, range: "SK", rangeOp: "begins_with", rangeValue: { S: "ORDER#" } },
    filters: [{ attr: "status", op: "=", value: { S: "SHIPPED" } }, { attr: "gone", op: "attribute_not_exists" }], join: "OR",
  });
  assert.equal(result.Statement, `SELECT "total", "a"."b"[0] FROM "app" WHERE "PK" = ? AND begins_with("SK", ?) AND ("status" = ? OR "gone" IS MISSING) ORDER BY "SK" DESC`);
  assert.deepEqual(result.Parameters, [{ S: "USER#1" }, { S: "ORDER#" }, { S: "SHIPPED" }]);
  assert.equal(result.Limit, 25);
  assert.equal(scan.scanVerdict(result.Statement, keyOf).scans, false);
});

test("a Scan of an index with BETWEEN, contains, attribute_type and exists", () => {
  const result = convert.toPartiql({
    op: "Scan", table: "app", index: "byStatus", limit: "",
    filters: [{ attr: "total", op: "BETWEEN", value: { N: "1" }, value2: { N: "9" } }, { attr: "tags", op: "contains", value: { S: "x" } },
      { attr: "m", op: "attribute_type", value: { S: "M" } }, { attr: "name", op: "attribute_exists" }], join: "AND",
  });
  assert.equal(result.Statement, `SELECT * FROM "app"."byStatus" WHERE "total" BETWEEN ? AND ? AND contains("tags", ?) AND attribute_type("m", ?) AND "name" IS NOT MISSING`);
  assert.deepEqual(result.Parameters, [{ N: "1" }, { N: "9" }, { S: "x" }, { S: "M" }]);
  assert.equal(result.Limit, undefined);
  assert.match(result.notes[0], /Scan/);
  assert.equal(scan.scanVerdict(result.Statement, keyOf).scans, true);
});

test("an UpdateItem with every action PartiQL has, a condition and RETURNING", () => {
  const result = convert.toPartiql({
    op: "UpdateItem", table: "app", itemKey: { PK: { S: "u" }, SK: { S: "s" } }, returnValues: "UPDATED_NEW",
    updates: [
      { action: "SET", attr: "status", value: { S: "DONE" } }, { action: "INCREMENT", attr: "n", value: { N: "1" } },
      { action: "DECREMENT", attr: "m", value: { N: "2" } }, { action: "APPEND", attr: "log", value: { L: [{ S: "x" }] } },
      { action: "REMOVE", attr: "old" }, { action: "ADD", attr: "tags", value: { SS: ["a"] } },
      { action: "DELETE", attr: "tags2", value: { SS: ["b"] } }, { action: "ADD", attr: "count", value: { N: "5" } },
    ],
    conditions: [{ attr: "version", op: "=", value: { N: "3" } }], condJoin: "AND",
  });
  assert.equal(result.Statement, `UPDATE "app" SET "status" = ? SET "n" = "n" + ? SET "m" = "m" - ? SET "log" = list_append("log", ?) REMOVE "old" ` +
    `SET "tags" = set_add("tags", ?) SET "tags2" = set_delete("tags2", ?) SET "count" = "count" + ? WHERE "PK" = ? AND "SK" = ? AND "version" = ? RETURNING MODIFIED NEW *`);
  assert.deepEqual(result.Parameters, [{ S: "DONE" }, { N: "1" }, { N: "2" }, { L: [{ S: "x" }] }, { SS: ["a"] }, { SS: ["b"] }, { N: "5" }, { S: "u" }, { S: "s" }, { N: "3" }]);
  assert.equal(result.notes.length, 1);
  assert.match(result.notes[0], /ADD of a number/);
  assert.throws(() => convert.toPartiql({ op: "UpdateItem", table: "app", itemKey: { PK: { S: "u" } }, updates: [{ action: "SET_IF_NOT_EXISTS", attr: "a", value: { S: "x" } }] }), /if_not_exists has no PartiQL form/);
  assert.throws(() => convert.toPartiql({ op: "UpdateItem", table: "app", itemKey: { PK: { S: "u" } }, updates: [] }), /at least one update/);
});

test("a DeleteItem with conditions joined by OR and ALL_OLD", () => {
  const result = convert.toPartiql({
    op: "DeleteItem", table: "my\"table", itemKey: { id: { N: "7" } }, returnValues: "ALL_OLD",
    conditions: [{ attr: "a.b", op: "<>", value: { BOOL: true } }, { attr: "x\\.y", op: ">=", value: { N: "0" } }], condJoin: "OR",
  });
  assert.equal(result.Statement, `DELETE FROM "my""table" WHERE "id" = ? AND ("a"."b" <> ? OR "x.y" >= ?) RETURNING ALL OLD *`);
  assert.deepEqual(result.Parameters, [{ N: "7" }, { BOOL: true }, { N: "0" }]);
  assert.equal(convert.toPartiql({ op: "DeleteItem", table: "t", itemKey: { id: { S: "a" } }, returnValues: "NONE" }).Statement, `DELETE FROM "t" WHERE "id" = ?`);
});

// --- code -------------------------------------------------------------------------------------
test("ExecuteStatement as boto3, JS v3 and the AWS CLI", () => {
  const request = code.executeStatementRequest(`SELECT * FROM "app" WHERE "PK" = ? AND "n" = 'it''s'`, { parameters: [{ S: "USER#1" }], limit: "10", consistentRead: true });
  assert.deepEqual(Object.keys(request), ["Statement", "Parameters", "Limit", "ConsistentRead"]);
  const [py, js, cli] = code.STATEMENT_GENERATORS.map(([, generate]) => generate(request, "http://127.0.0.1:8000"));
  assert.ok(py.includes("response = client.execute_statement(") && py.includes(`Statement="SELECT * FROM \\"app\\" WHERE \\"PK\\" = ? AND \\"n\\" = 'it''s'",`), py);
  assert.ok(py.includes('Parameters=[{"S": "USER#1"}],') && py.includes("ConsistentRead=True,") && py.includes("Limit=10,"), py);
  assert.ok(js.includes("ExecuteStatementCommand") && js.includes("Parameters: [") && js.includes('endpoint: "http://127.0.0.1:8000"'), js);
  assert.equal(cli, "aws dynamodb execute-statement \\\n    --statement 'SELECT * FROM \"app\" WHERE \"PK\" = ? AND \"n\" = '\\''it'\\'''\\''s'\\''' \\\n" +
    "    --parameters '[{\"S\":\"USER#1\"}]' \\\n    --limit 10 \\\n    --consistent-read \\\n    --endpoint-url http://127.0.0.1:8000\n");
  const plain = code.executeStatementCli(code.executeStatementRequest(`SELECT * FROM "app"`), "https://dynamodb.eu-west-1.amazonaws.com");
  assert.equal(plain, "aws dynamodb execute-statement \\\n    --statement 'SELECT * FROM \"app\"'\n");
});

// --- history ----------------------------------------------------------------------------------
test("history: newest first, no duplicates, capped, tolerant of bad storage", () => {
  let list = [];
  list = history.remember(list, { statement: "A", table: "t", at: 1 });
  list = history.remember(list, { statement: "B", table: "t", at: 2 });
  list = history.remember(list, { statement: "A", table: "t", at: 3 });
  assert.deepEqual(list.map((e) => `${e.statement}${e.at}`), ["A3", "B2"]);
  list = history.remember(list, { statement: "A", table: "t", parameters: [{ S: "x" }], at: 4 });
  assert.equal(list.length, 3);
  for (let i = 0; i < 60; i += 1) list = history.remember(list, { statement: `S${i}`, table: "t", at: i });
  assert.equal(list.length, history.HISTORY_MAX);
  const store = new Map();
  const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
  history.saveHistory(storage, list);
  assert.deepEqual(history.loadHistory(storage), list);
  store.set(history.HISTORY_KEY, "{not json");
  assert.deepEqual(history.loadHistory(storage), []);
  history.saveHistory({ setItem: () => { throw new Error("QuotaExceededError"); } }, list); // does not throw
  assert.deepEqual(history.loadHistory(null), []); // no localStorage at all
  history.saveHistory(null, list);
});

console.log(`ok ${count}`);
