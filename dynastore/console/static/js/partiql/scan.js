// Will a PartiQL SELECT scan? DynamoDB runs a SELECT as a Query when its WHERE clause
// fixes the partition key of the table or index it names (with = or IN), and as a Scan
// of the whole table or index otherwise. Through AND one fixing side is enough; through
// OR every side must fix it (else the other side needs every partition); NOT never fixes.

import { isWord, tokenize } from "./lexer.js";

const VERBS = ["SELECT", "INSERT", "UPDATE", "DELETE", "EXISTS"];
const OPENERS = { "(": ")", "[": "]", "{": "}", "<<": ">>" };
const CLOSERS = new Set(Object.values(OPENERS));

/** The statement's verb, the table and index it reads (FROM "t"."i") and its WHERE tokens. */
export function analyzeStatement(text) {
  const tokens = tokenize(text);
  const first = tokens[0];
  const verb = first && first.type === "word" && VERBS.includes(first.value.toUpperCase()) ? first.value.toUpperCase() : null;
  const result = { verb, table: null, index: null, where: null, whereError: null };
  if (verb !== "SELECT") return result;
  const top = topLevel(tokens);
  const from = top.findIndex((i) => isWord(tokens[i], "FROM"));
  if (from < 0) return result;
  const at = top[from];
  const name = (token) => (token && (token.type === "quoted" || token.type === "word") ? token.value : null);
  result.table = name(tokens[at + 1]);
  if (tokens[at + 2]?.value === "." && tokens[at + 2].type === "op") result.index = name(tokens[at + 3]);
  const where = top.findIndex((i) => i > at && isWord(tokens[i], "WHERE"));
  if (where < 0) return result;
  const start = top[where] + 1;
  const stop = top.find((i) => i > start && ((isWord(tokens[i], "ORDER") && isWord(tokens[i + 1], "BY")) || tokens[i].value === ";"));
  result.where = tokens.slice(start, stop === undefined ? tokens.length : stop);
  return result;
}

/** Indexes of the tokens outside any brackets. */
function topLevel(tokens) {
  const indexes = [];
  let depth = 0;
  tokens.forEach((token, index) => {
    if (token.type === "op" && token.value in OPENERS) depth += 1;
    else if (token.type === "op" && CLOSERS.has(token.value)) depth = Math.max(0, depth - 1);
    else if (depth === 0) indexes.push(index);
  });
  return indexes;
}

/**
 * The WHERE tokens as a tree: { or: [...] }, { and: [...] }, { not: node } or
 * { predicate: tokens }. Throws on unbalanced brackets or an empty condition.
 */
export function parseCondition(tokens) {
  let at = 0;
  const peek = () => tokens[at];
  const orNode = () => {
    const parts = [andNode()];
    while (isWord(peek(), "OR")) { at += 1; parts.push(andNode()); }
    return parts.length === 1 ? parts[0] : { or: parts };
  };
  const andNode = () => {
    const parts = [notNode()];
    while (isWord(peek(), "AND")) { at += 1; parts.push(notNode()); }
    return parts.length === 1 ? parts[0] : { and: parts };
  };
  const notNode = () => {
    if (isWord(peek(), "NOT")) { at += 1; return { not: notNode() }; }
    return primary();
  };
  const primary = () => {
    if (peek()?.type === "op" && peek().value === "(") {
      const saved = at;
      at += 1;
      const inner = orNode();
      if (peek()?.value === ")") {
        at += 1;
        const next = peek();
        if (!next || isWord(next, "AND") || isWord(next, "OR") || next.value === ")") return inner;
      }
      at = saved; // "(a) = 1": the parenthesis belongs to the predicate
    }
    return predicate();
  };
  const predicate = () => {
    const start = at;
    let depth = 0;
    let between = false;
    while (at < tokens.length) {
      const token = tokens[at];
      if (token.type === "op" && token.value in OPENERS) depth += 1;
      else if (token.type === "op" && CLOSERS.has(token.value)) {
        if (depth === 0) break;
        depth -= 1;
      } else if (depth === 0 && isWord(token, "BETWEEN")) between = true;
      else if (depth === 0 && isWord(token, "AND")) {
        if (!between) break;
        between = false; // the AND of BETWEEN x AND y
      } else if (depth === 0 && isWord(token, "OR")) break;
      at += 1;
    }
    if (depth !== 0) throw new Error("unbalanced brackets in the WHERE clause");
    if (at === start) throw new Error("an empty condition in the WHERE clause");
    return { predicate: tokens.slice(start, at) };
  };
  const tree = orNode();
  if (at !== tokens.length) throw new Error(`unexpected ${tokens[at].value} in the WHERE clause`);
  return tree;
}

const isValue = (token) => Boolean(token) && (token.type === "string" || token.type === "number" || token.type === "param");
const isName = (token, name) => Boolean(token) && (token.type === "quoted" || (token.type === "word" && !["TRUE", "FALSE", "NULL", "MISSING"].includes(token.value.toUpperCase()))) && token.value === name;

/** One value: a literal, a parameter, or a negative number. */
function valueLength(tokens, at) {
  if (isValue(tokens[at])) return 1;
  if (tokens[at]?.value === "-" && tokens[at + 1]?.type === "number") return 2;
  return 0;
}

/** Does one comparison fix ``key``: key = value, value = key, or key IN [...] / (...) / ? */
export function predicateFixes(tokens, key) {
  if (isName(tokens[0], key) && tokens[1]?.value === "=" && tokens[1].type === "op") {
    return valueLength(tokens, 2) > 0 && valueLength(tokens, 2) === tokens.length - 2;
  }
  const left = valueLength(tokens, 0);
  if (left && tokens[left]?.value === "=" && tokens[left].type === "op" && isName(tokens[left + 1], key) && tokens.length === left + 2) return true;
  if (isName(tokens[0], key) && isWord(tokens[1], "IN")) {
    const rest = tokens.slice(2);
    if (rest.length === 1 && rest[0].type === "param") return true;
    return rest.length >= 2 && (rest[0].value === "[" || rest[0].value === "(") && rest[rest.length - 1].value === OPENERS[rest[0].value];
  }
  return false;
}

export function conditionFixes(node, key) {
  if (node.predicate) return predicateFixes(node.predicate, key);
  if (node.and) return node.and.some((part) => conditionFixes(part, key));
  if (node.or) return node.or.every((part) => conditionFixes(part, key));
  return false; // NOT: the complement of a partition is every other partition
}

/**
 * Whether ``text`` will scan. ``partitionKeyOf(table, index)`` answers the partition key
 * attribute of that table or index, or null when it is not known.
 * Returns { verb, table, index, partitionKey, scans (true, false, or null when it cannot
 * tell or the statement is not a SELECT), reason }.
 */
export function scanVerdict(text, partitionKeyOf) {
  const statement = analyzeStatement(text);
  const { verb, table, index } = statement;
  const verdict = { verb, table, index, partitionKey: null, scans: null, reason: "" };
  if (verb !== "SELECT") {
    verdict.reason = verb ? `${verb} statements work on one item by its key: no scan.` : "";
    return verdict;
  }
  if (!table) { verdict.reason = "No table named after FROM yet."; return verdict; }
  const target = index ? `index "${index}" of "${table}"` : `"${table}"`;
  const key = partitionKeyOf(table, index);
  if (!key) { verdict.reason = `The key schema of ${target} is not known.`; return verdict; }
  verdict.partitionKey = key;
  if (!statement.where || !statement.where.length) {
    verdict.scans = true;
    verdict.reason = `No WHERE clause: this SELECT is a Scan of ${target}, reading every item.`;
    return verdict;
  }
  let tree;
  try {
    tree = parseCondition(statement.where);
  } catch (error) {
    verdict.scans = true;
    verdict.reason = `The WHERE clause could not be read (${error.message}); it may scan ${target}.`;
    return verdict;
  }
  verdict.scans = !conditionFixes(tree, key);
  verdict.reason = verdict.scans
    ? `The WHERE clause does not fix the partition key "${key}" with = or IN (on every side of an OR): this SELECT is a Scan of ${target}, reading every item.`
    : `The WHERE clause fixes the partition key "${key}": this SELECT runs as a Query.`;
  return verdict;
}

/** A partitionKeyOf for scanVerdict from DescribeTable answers keyed by table name. */
export function partitionKeyLookup(tables) {
  return (tableName, indexName) => {
    const table = tables[tableName];
    if (!table) return null;
    const schema = indexName
      ? [...(table.GlobalSecondaryIndexes || []), ...(table.LocalSecondaryIndexes || [])].find((i) => i.IndexName === indexName)?.KeySchema
      : table.KeySchema;
    return schema ? schema.find((k) => k.KeyType === "HASH")?.AttributeName || null : null;
  };
}
