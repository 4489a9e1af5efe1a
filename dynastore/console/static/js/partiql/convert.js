// The expression builder's request as a PartiQL statement: the same read or write, with
// every value bound as a ? parameter (in the order the ?s appear), so numbers, sets and
// binaries keep their exact types.

import { quoteIdentifier } from "./lexer.js";

export class ConversionError extends Error {}

const RETURNING = { ALL_NEW: "ALL NEW *", UPDATED_NEW: "MODIFIED NEW *", ALL_OLD: "ALL OLD *", UPDATED_OLD: "MODIFIED OLD *" };
const COMPARISON = new Set(["=", "<>", "<", "<=", ">", ">="]);
const SET_TYPES = new Set(["SS", "NS", "BS"]);

/** "a.b[2].c" (a dot inside a name written "a\.b") -> "a"."b"[2]."c" */
export function partiqlPath(text) {
  const trimmed = String(text).trim();
  if (!trimmed) throw new ConversionError("an attribute name is empty");
  return trimmed.split(/(?<!\\)\./).map((part) => {
    const found = /^(.*?)((?:\[\d+\])*)$/.exec(part.replace(/\\\./g, "."));
    if (!found[1]) throw new ConversionError(`an attribute name is empty in ${JSON.stringify(trimmed)}`);
    return quoteIdentifier(found[1]) + found[2];
  }).join(".");
}

class Statement {
  constructor() { this.parameters = []; this.notes = []; }

  bind(value) {
    if (!value || typeof value !== "object") throw new ConversionError("a value is missing");
    this.parameters.push(value);
    return "?";
  }

  /** One builder condition row { attr, op, value, value2 } (values typed). */
  condition(row) {
    const path = partiqlPath(row.attr);
    switch (row.op) {
      case "attribute_exists": return `${path} IS NOT MISSING`;
      case "attribute_not_exists": return `${path} IS MISSING`;
      case "attribute_type": case "begins_with": case "contains": return `${row.op}(${path}, ${this.bind(row.value)})`;
      case "BETWEEN": return `${path} BETWEEN ${this.bind(row.value)} AND ${this.bind(row.value2)}`;
      default:
        if (!COMPARISON.has(row.op)) throw new ConversionError(`${row.op} has no PartiQL form here`);
        return `${path} ${row.op} ${this.bind(row.value)}`;
    }
  }

  conditions(rows, join) {
    const used = (rows || []).filter((row) => row.attr && String(row.attr).trim());
    if (!used.length) return "";
    const text = used.map((row) => this.condition(row)).join(` ${join === "OR" ? "OR" : "AND"} `);
    return used.length > 1 && join === "OR" ? `(${text})` : text;
  }

  keyEquals(key) {
    return Object.entries(key).map(([name, value]) => `${quoteIdentifier(name)} = ${this.bind(value)}`).join(" AND ");
  }
}

function where(parts) {
  const used = parts.filter(Boolean);
  return used.length ? ` WHERE ${used.join(" AND ")}` : "";
}

/**
 * ``spec``: { op: Query | Scan | UpdateItem | DeleteItem, table, index, key (Query:
 * { hash, hashValue, range, rangeOp, rangeValue, rangeValue2 }), forward, filters, join,
 * projection: [paths], limit, itemKey ({ name: value }, for writes), updates
 * ([{ action, attr, value }]), conditions, condJoin, returnValues }, values in DynamoDB JSON.
 * Returns { Statement, Parameters (absent when none), Limit (when set), notes: [text] }.
 */
export function toPartiql(spec) {
  const statement = new Statement();
  let text;
  if (spec.op === "Query" || spec.op === "Scan") text = selectText(statement, spec);
  else if (spec.op === "UpdateItem") text = updateText(statement, spec);
  else if (spec.op === "DeleteItem") text = `DELETE FROM ${quoteIdentifier(spec.table)}${where([statement.keyEquals(spec.itemKey), statement.conditions(spec.conditions, spec.condJoin)])}${returning(spec, ["ALL_OLD"])}`;
  else throw new ConversionError(`${spec.op} has no PartiQL form`);
  const request = { Statement: text };
  if (statement.parameters.length) request.Parameters = statement.parameters;
  if ((spec.op === "Query" || spec.op === "Scan") && spec.limit) request.Limit = Number(spec.limit);
  return { ...request, notes: statement.notes };
}

function selectText(statement, spec) {
  const projection = (spec.projection || []).map((path) => String(path).trim()).filter(Boolean);
  const columns = projection.length ? projection.map(partiqlPath).join(", ") : "*";
  const source = quoteIdentifier(spec.table) + (spec.index ? `.${quoteIdentifier(spec.index)}` : "");
  const parts = [];
  if (spec.op === "Query") {
    const key = spec.key;
    if (!key || !key.hash) throw new ConversionError("a Query needs its partition key");
    parts.push(`${quoteIdentifier(key.hash)} = ${statement.bind(key.hashValue)}`);
    if (key.range && key.rangeOp) {
      parts.push(statement.condition({ attr: key.range.replace(/\./g, "\\."), op: key.rangeOp, value: key.rangeValue, value2: key.rangeValue2 }));
    }
  }
  parts.push(statement.conditions(spec.filters, spec.join));
  let text = `SELECT ${columns} FROM ${source}${where(parts)}`;
  if (spec.op === "Query" && spec.forward === false) {
    if (!spec.key.range) throw new ConversionError("descending order needs a sort key");
    text += ` ORDER BY ${quoteIdentifier(spec.key.range)} DESC`;
  }
  if (spec.op === "Scan") statement.notes.push("This SELECT does not fix the partition key: DynamoDB runs it as a Scan.");
  return text;
}

function updateText(statement, spec) {
  const actions = [];
  for (const row of (spec.updates || []).filter((r) => r.attr && String(r.attr).trim())) {
    const path = partiqlPath(row.attr);
    switch (row.action) {
      case "SET": actions.push(`SET ${path} = ${statement.bind(row.value)}`); break;
      case "INCREMENT": actions.push(`SET ${path} = ${path} + ${statement.bind(row.value)}`); break;
      case "DECREMENT": actions.push(`SET ${path} = ${path} - ${statement.bind(row.value)}`); break;
      case "APPEND": actions.push(`SET ${path} = list_append(${path}, ${statement.bind(row.value)})`); break;
      case "REMOVE": actions.push(`REMOVE ${path}`); break;
      case "ADD":
        if (row.value && SET_TYPES.has(Object.keys(row.value)[0])) actions.push(`SET ${path} = set_add(${path}, ${statement.bind(row.value)})`);
        else {
          actions.push(`SET ${path} = ${path} + ${statement.bind(row.value)}`);
          statement.notes.push(`ADD of a number starts from 0 when ${row.attr} is missing; ${path} + ? needs ${row.attr} to exist.`);
        }
        break;
      case "DELETE": actions.push(`SET ${path} = set_delete(${path}, ${statement.bind(row.value)})`); break;
      case "SET_IF_NOT_EXISTS": throw new ConversionError("if_not_exists has no PartiQL form: DynamoDB's PartiQL UPDATE cannot set an attribute only when it is missing");
      default: throw new ConversionError(`unknown update action ${row.action}`);
    }
  }
  if (!actions.length) throw new ConversionError("Add at least one update action");
  // The ?s are bound in the order they appear: the key's before the condition's.
  const key = statement.keyEquals(spec.itemKey);
  const condition = statement.conditions(spec.conditions, spec.condJoin);
  return `UPDATE ${quoteIdentifier(spec.table)} ${actions.join(" ")}${where([key, condition])}${returning(spec, Object.keys(RETURNING))}`;
}

function returning(spec, allowed) {
  const value = spec.returnValues;
  return value && value !== "NONE" && allowed.includes(value) ? ` RETURNING ${RETURNING[value]}` : "";
}
