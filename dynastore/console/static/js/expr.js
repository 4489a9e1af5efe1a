// Expression building: form rows -> expression text + ExpressionAttributeNames/Values.

import { typedValue } from "./ddb.js";

export const COMPARISONS = ["=", "<>", "<", "<=", ">", ">=", "BETWEEN", "begins_with", "contains", "attribute_exists", "attribute_not_exists", "attribute_type"];
export const KEY_OPERATORS = ["=", "<", "<=", ">", ">=", "BETWEEN", "begins_with"];
export const VALUE_TYPES = ["S", "N", "BOOL", "NULL", "SS", "NS", "B", "JSON"];
export const UPDATE_ACTIONS = [
  ["SET", "SET ="], ["SET_IF_NOT_EXISTS", "SET if_not_exists"], ["INCREMENT", "SET + (add)"],
  ["DECREMENT", "SET − (subtract)"], ["APPEND", "SET list_append"], ["REMOVE", "REMOVE"],
  ["ADD", "ADD (number, set)"], ["DELETE", "DELETE (from set)"],
];

const SIMPLE_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

export function needsNoValue(op) { return op === "attribute_exists" || op === "attribute_not_exists"; }

export class ExpressionBuilder {
  constructor() {
    this.names = {};
    this.values = {};
    this.placeholderOf = new Map();
  }

  /** "#a.#b[2].#c" for the document path "a.b[2].c" (write "a\.b" for a dot inside a name). */
  path(text) {
    const trimmed = text.trim();
    if (!trimmed) throw new Error("an attribute name is empty");
    const parts = trimmed.split(/(?<!\\)\./).map((part) => part.replace(/\\\./g, "."));
    return parts.map((part) => {
      const found = /^(.*?)((?:\[\d+\])*)$/.exec(part);
      return this.name(found[1]) + found[2];
    }).join(".");
  }

  name(attribute) {
    if (!attribute) throw new Error("an attribute name is empty");
    if (this.placeholderOf.has(attribute)) return this.placeholderOf.get(attribute);
    const base = SIMPLE_NAME.test(attribute) ? `#${attribute}` : "#n";
    let placeholder = base === "#n" ? `#n${this.placeholderOf.size}` : base;
    while (placeholder in this.names) placeholder = `${base}${Object.keys(this.names).length}`;
    this.names[placeholder] = attribute;
    this.placeholderOf.set(attribute, placeholder);
    return placeholder;
  }

  value(av, hint = "v") {
    const base = `:${SIMPLE_NAME.test(hint) ? hint : "v"}`;
    let placeholder = base;
    for (let n = 1; placeholder in this.values; n += 1) placeholder = `${base}${n}`;
    this.values[placeholder] = av;
    return placeholder;
  }

  params() {
    const params = {};
    if (Object.keys(this.names).length) params.ExpressionAttributeNames = { ...this.names };
    if (Object.keys(this.values).length) params.ExpressionAttributeValues = { ...this.values };
    return params;
  }
}

function hintOf(path) { return path.trim().split(/[.[]/)[0].replace(/[^A-Za-z0-9_]/g, "") || "v"; }

/** One condition row {attr, op, type, value, value2} -> expression text. */
export function conditionText(builder, row) {
  const attr = builder.path(row.attr);
  const hint = hintOf(row.attr);
  const op = row.op;
  if (needsNoValue(op)) return `${op}(${attr})`;
  if (op === "attribute_type") return `attribute_type(${attr}, ${builder.value({ S: row.value.trim() }, `${hint}_type`)})`;
  const value = builder.value(typedValue(row.type, row.value, row.attr), hint);
  if (op === "BETWEEN") {
    const upper = builder.value(typedValue(row.type, row.value2 || "", row.attr), `${hint}_hi`);
    return `${attr} BETWEEN ${value} AND ${upper}`;
  }
  if (op === "begins_with" || op === "contains") return `${op}(${attr}, ${value})`;
  return `${attr} ${op} ${value}`;
}

export function conditionExpression(builder, rows, join = "AND") {
  const used = rows.filter((row) => row.attr && row.attr.trim());
  if (!used.length) return "";
  const parts = used.map((row) => conditionText(builder, row));
  return parts.length === 1 ? parts[0] : parts.map((part) => (part.includes(" AND ") || part.includes(" OR ") ? `(${part})` : part)).join(` ${join} `);
}

/** Partition key equality plus an optional sort key condition. */
export function keyConditionExpression(builder, key) {
  const parts = [`${builder.path(key.hash)} = ${builder.value(key.hashValue, hintOf(key.hash))}`];
  if (key.range && key.rangeOp && key.rangeValue) {
    parts.push(conditionText(builder, { attr: key.range, op: key.rangeOp, type: key.rangeType, value: key.rangeValue, value2: key.rangeValue2 }));
  }
  return parts.join(" AND ");
}

export function updateExpression(builder, rows) {
  const clauses = { SET: [], REMOVE: [], ADD: [], DELETE: [] };
  for (const row of rows.filter((r) => r.attr && r.attr.trim())) {
    const attr = builder.path(row.attr);
    const value = () => builder.value(typedValue(row.type, row.value, row.attr), hintOf(row.attr));
    switch (row.action) {
      case "SET": clauses.SET.push(`${attr} = ${value()}`); break;
      case "SET_IF_NOT_EXISTS": clauses.SET.push(`${attr} = if_not_exists(${attr}, ${value()})`); break;
      case "INCREMENT": clauses.SET.push(`${attr} = ${attr} + ${value()}`); break;
      case "DECREMENT": clauses.SET.push(`${attr} = ${attr} - ${value()}`); break;
      case "APPEND": clauses.SET.push(`${attr} = list_append(${attr}, ${value()})`); break;
      case "REMOVE": clauses.REMOVE.push(attr); break;
      case "ADD": clauses.ADD.push(`${attr} ${value()}`); break;
      case "DELETE": clauses.DELETE.push(`${attr} ${value()}`); break;
      default: throw new Error(`unknown update action ${row.action}`);
    }
  }
  return Object.entries(clauses).filter(([, list]) => list.length).map(([action, list]) => `${action} ${list.join(", ")}`).join(" ");
}
