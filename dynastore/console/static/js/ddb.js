// DynamoDB attribute values: lossless JSON, plain <-> wire conversion, validation, display.
//
// Plain JSON keeps every type: numbers are kept as their literal text (Num), so a
// 38-digit number never passes through a double; sets and binaries, which JSON
// lacks, are written as one-key objects {"$SS": [...]}, {"$NS": [...]},
// {"$BS": [...]}, {"$B": "base64"}. A real map that happens to look like one of
// those is wrapped as {"$M": {...}}, so the conversion is exact both ways.

export const TYPES = ["S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"];
const MARKERS = new Set(["$SS", "$NS", "$BS", "$B", "$M"]);
export const MAX_NUMBER_DIGITS = 38;

export class Num {
  constructor(text) { this.text = text; }
  toString() { return this.text; }
}

export class ValueError extends Error {
  constructor(path, message) {
    super(path ? `${path}: ${message}` : message);
    this.path = path;
  }
}

// --- lossless JSON ------------------------------------------------------------------
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

export function parseLossless(text) {
  let i = 0;
  const fail = (message) => {
    const before = text.slice(0, i).split("\n");
    throw new SyntaxError(`${message} (line ${before.length}, column ${before[before.length - 1].length + 1})`);
  };
  const space = () => { while (i < text.length && " \t\n\r".includes(text[i])) i += 1; };
  const match = (regex) => { regex.lastIndex = i; const found = regex.exec(text); if (found) i = regex.lastIndex; return found && found[0]; };
  const string = () => { const raw = match(STRING); if (raw === null) fail("Invalid string"); return JSON.parse(raw); };
  function value() {
    space();
    const c = text[i];
    if (c === "{") return object();
    if (c === "[") return array();
    if (c === '"') return string();
    if (c === "-" || (c >= "0" && c <= "9")) { const raw = match(NUMBER); if (raw === null) fail("Invalid number"); return new Num(raw); }
    for (const [word, result] of [["true", true], ["false", false], ["null", null]]) {
      if (text.startsWith(word, i)) { i += word.length; return result; }
    }
    return fail(c === undefined ? "Unexpected end of input" : `Unexpected character ${JSON.stringify(c)}`);
  }
  function object() {
    i += 1;
    const result = {};
    space();
    if (text[i] === "}") { i += 1; return result; }
    for (;;) {
      space();
      if (text[i] !== '"') fail("Expected a quoted property name");
      const key = string();
      space();
      if (text[i] !== ":") fail("Expected ':'");
      i += 1;
      if (Object.prototype.hasOwnProperty.call(result, key)) fail(`Duplicate key ${JSON.stringify(key)}`);
      Object.defineProperty(result, key, { value: value(), enumerable: true, writable: true, configurable: true });
      space();
      if (text[i] === ",") { i += 1; continue; }
      if (text[i] === "}") { i += 1; return result; }
      fail("Expected ',' or '}'");
    }
  }
  function array() {
    i += 1;
    const result = [];
    space();
    if (text[i] === "]") { i += 1; return result; }
    for (;;) {
      result.push(value());
      space();
      if (text[i] === ",") { i += 1; continue; }
      if (text[i] === "]") { i += 1; return result; }
      fail("Expected ',' or ']'");
    }
  }
  const result = value();
  space();
  if (i < text.length) fail("Unexpected text after the JSON value");
  return result;
}

export function stringifyLossless(value, indent = 2, depth = 0) {
  const pad = " ".repeat(indent * (depth + 1));
  const end = " ".repeat(indent * depth);
  if (value instanceof Num) return value.text;
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) {
    if (!value.length) return "[]";
    const inner = value.map((item) => stringifyLossless(item, indent, depth + 1));
    const flat = `[${inner.join(", ")}]`;
    if (flat.length <= 72 && !flat.includes("\n")) return flat;
    return `[\n${inner.map((item) => pad + item).join(",\n")}\n${end}]`;
  }
  const keys = Object.keys(value);
  if (!keys.length) return "{}";
  const inner = keys.map((key) => `${JSON.stringify(key)}: ${stringifyLossless(value[key], indent, depth + 1)}`);
  if (keys.length === 1 && MARKERS.has(keys[0]) && inner[0].length <= 72 && !inner[0].includes("\n")) return `{${inner[0]}}`;
  return `{\n${inner.map((item) => pad + item).join(",\n")}\n${end}}`;
}

// --- numbers and binaries ---------------------------------------------------------------
const NUMBER_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** null when ``text`` is a number DynamoDB accepts, else the reason it is not. */
export function numberProblem(text) {
  const trimmed = String(text).trim();
  if (!NUMBER_TEXT.test(trimmed)) return `${JSON.stringify(String(text))} is not a number`;
  const [mantissa, exponent = "0"] = trimmed.replace(/^[+-]/, "").split(/[eE]/);
  const point = mantissa.indexOf(".");
  const integerLength = point < 0 ? mantissa.length : point;
  let digits = mantissa.replace(".", "");
  const leadingZeros = digits.length - digits.replace(/^0+/, "").length;
  digits = digits.slice(leadingZeros).replace(/0+$/, "");
  if (!digits) return null;
  if (digits.length > MAX_NUMBER_DIGITS) return `${digits.length} significant digits; DynamoDB keeps at most ${MAX_NUMBER_DIGITS}`;
  const magnitude = integerLength - leadingZeros - 1 + Number(exponent);
  if (magnitude > 125) return "too large: DynamoDB numbers stay below 1E+126";
  if (magnitude < -130) return "too small: DynamoDB numbers are at least 1E-130 in magnitude";
  return null;
}

/** Canonical text for comparing numbers (1.50 and 15e-1 are the same number). */
export function canonicalNumber(text) {
  const trimmed = String(text).trim();
  const negative = trimmed.startsWith("-");
  const [mantissa, exponent = "0"] = trimmed.replace(/^[+-]/, "").split(/[eE]/);
  const point = mantissa.indexOf(".");
  const integerLength = point < 0 ? mantissa.length : point;
  let digits = mantissa.replace(".", "");
  const leadingZeros = digits.length - digits.replace(/^0+/, "").length;
  digits = digits.slice(leadingZeros).replace(/0+$/, "");
  if (!digits) return "0";
  return `${negative ? "-" : ""}0.${digits}e${integerLength - leadingZeros + Number(exponent)}`;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
export function isBase64(text) { return typeof text === "string" && BASE64.test(text); }

export function base64ToBytes(text) { return Uint8Array.from(atob(text), (c) => c.charCodeAt(0)); }
export function bytesToBase64(bytes) { let s = ""; for (const b of bytes) s += String.fromCharCode(b); return btoa(s); }

// --- wire <-> plain --------------------------------------------------------------------
export function typeOf(value) { return value && typeof value === "object" ? Object.keys(value)[0] : undefined; }

export function wireToPlain(av) {
  const type = typeOf(av);
  const v = av[type];
  switch (type) {
    case "S": return v;
    case "N": return new Num(v);
    case "BOOL": return v;
    case "NULL": return null;
    case "B": return { $B: v };
    case "SS": return { $SS: [...v] };
    case "NS": return { $NS: v.map((n) => new Num(n)) };
    case "BS": return { $BS: [...v] };
    case "L": return v.map(wireToPlain);
    case "M": {
      const plain = mapToPlain(v);
      const keys = Object.keys(plain);
      return keys.length === 1 && MARKERS.has(keys[0]) ? { $M: plain } : plain;
    }
    default: throw new ValueError("", `unknown attribute type ${type}`);
  }
}

export function mapToPlain(map) {
  const result = {};
  for (const [key, value] of Object.entries(map)) {
    Object.defineProperty(result, key, { value: wireToPlain(value), enumerable: true, writable: true, configurable: true });
  }
  return result;
}

export function itemToPlainText(item) { return stringifyLossless(mapToPlain(item)); }
export function itemToWireText(item) { return JSON.stringify(item, null, 2); }

export function plainToWire(value, path = "") {
  if (typeof value === "string") return { S: value };
  if (value instanceof Num) return { N: checkedNumber(value.text, path) };
  if (typeof value === "number") return { N: checkedNumber(String(value), path) };
  if (typeof value === "boolean") return { BOOL: value };
  if (value === null) return { NULL: true };
  if (Array.isArray(value)) return { L: value.map((item, index) => plainToWire(item, `${path}[${index}]`)) };
  const keys = Object.keys(value);
  if (keys.length === 1 && MARKERS.has(keys[0])) return markerToWire(keys[0], value[keys[0]], path);
  return { M: plainMapToWire(value, path) };
}

export function plainMapToWire(object, path = "") {
  if (!object || typeof object !== "object" || Array.isArray(object) || object instanceof Num) {
    throw new ValueError(path, "expected a JSON object of attributes");
  }
  const result = {};
  for (const [key, value] of Object.entries(object)) {
    Object.defineProperty(result, key, { value: plainToWire(value, path ? `${path}.${key}` : key), enumerable: true, writable: true, configurable: true });
  }
  return result;
}

function markerToWire(marker, value, path) {
  const where = `${path} ${marker}`.trim();
  if (marker === "$M") return { M: plainMapToWire(value, path) };
  if (marker === "$B") {
    if (!isBase64(value)) throw new ValueError(where, "binary must be base64 text");
    return { B: value };
  }
  if (!Array.isArray(value) || !value.length) throw new ValueError(where, "a set needs a non-empty array");
  if (marker === "$SS") {
    if (value.some((s) => typeof s !== "string")) throw new ValueError(where, "a string set holds strings only");
    return { SS: unique(value, (s) => s, where) };
  }
  if (marker === "$NS") {
    const texts = value.map((n) => (n instanceof Num ? n.text : typeof n === "string" ? n : String(n)));
    texts.forEach((text) => checkedNumber(text, where));
    return { NS: unique(texts, canonicalNumber, where) };
  }
  if (value.some((b) => !isBase64(b))) throw new ValueError(where, "a binary set holds base64 strings only");
  return { BS: unique(value, (b) => b, where) };
}

function unique(values, keyOf, where) {
  const seen = new Set();
  for (const value of values) {
    const key = keyOf(value);
    if (seen.has(key)) throw new ValueError(where, `duplicate set member ${JSON.stringify(String(value))}`);
    seen.add(key);
  }
  return values;
}

function checkedNumber(text, path) {
  const problem = numberProblem(text);
  if (problem) throw new ValueError(path, problem);
  return String(text).trim();
}

/** Checks DynamoDB JSON (as parsed by parseLossless) and returns it as wire JSON. */
export function checkWire(av, path) {
  if (!av || typeof av !== "object" || Array.isArray(av) || av instanceof Num) {
    throw new ValueError(path, 'expected an attribute value such as {"S": "text"}');
  }
  const keys = Object.keys(av);
  if (keys.length !== 1 || !TYPES.includes(keys[0])) {
    throw new ValueError(path, `expected exactly one type key (${TYPES.join(", ")}), found ${keys.join(", ") || "none"}`);
  }
  const type = keys[0];
  const v = av[type];
  const fail = (message) => { throw new ValueError(path, `${type}: ${message}`); };
  switch (type) {
    case "S": if (typeof v !== "string") fail("must be a string"); return { S: v };
    case "N": {
      const text = v instanceof Num ? v.text : v;
      if (typeof text !== "string") fail('write numbers as strings, e.g. {"N": "42"}');
      return { N: checkedNumber(text, path) };
    }
    case "B": if (!isBase64(v)) fail("must be base64 text"); return { B: v };
    case "BOOL": if (typeof v !== "boolean") fail("must be true or false"); return { BOOL: v };
    case "NULL": if (v !== true) fail("must be true"); return { NULL: true };
    case "L": if (!Array.isArray(v)) fail("must be an array"); return { L: v.map((item, index) => checkWire(item, `${path}[${index}]`)) };
    case "M": return { M: checkWireMap(v, path) };
    default: {
      const marker = `$${type}`;
      const members = Array.isArray(v) ? v.map((m) => (m instanceof Num ? m.text : m)) : v;
      if (type !== "NS" && Array.isArray(members) && members.some((m) => typeof m !== "string")) fail("members must be strings");
      if (type === "NS" && Array.isArray(members) && members.some((m) => typeof m !== "string")) fail('write numbers as strings, e.g. {"NS": ["1", "2"]}');
      return markerToWire(marker, members, path);
    }
  }
}

export function checkWireMap(map, path = "") {
  if (!map || typeof map !== "object" || Array.isArray(map) || map instanceof Num) throw new ValueError(path, "expected a JSON object of attributes");
  const result = {};
  for (const [key, value] of Object.entries(map)) {
    Object.defineProperty(result, key, { value: checkWire(value, path ? `${path}.${key}` : key), enumerable: true, writable: true, configurable: true });
  }
  return result;
}

export function parseItemText(text, format) {
  const parsed = parseLossless(text);
  return format === "plain" ? plainMapToWire(parsed) : checkWireMap(parsed);
}

/** A typed value typed into a one-line input (forms, key finder, filters). */
export function typedValue(type, text, path = "value") {
  switch (type) {
    case "S": return { S: text };
    case "N": return { N: checkedNumber(text, path) };
    case "B": if (!isBase64(text.trim())) throw new ValueError(path, "binary must be base64 text"); return { B: text.trim() };
    case "BOOL": {
      const lowered = text.trim().toLowerCase();
      if (lowered !== "true" && lowered !== "false") throw new ValueError(path, "write true or false");
      return { BOOL: lowered === "true" };
    }
    case "NULL": return { NULL: true };
    case "SS": case "NS": case "BS": {
      const members = splitList(text);
      return markerToWire(`$${type}`, members, path);
    }
    case "JSON": return plainToWire(parseLossless(text), path);
    default: return checkWire(parseLossless(text), path);
  }
}

export function splitList(text) { return text.split(",").map((part) => part.trim()).filter((part) => part.length); }

// --- equality and display -----------------------------------------------------------------
export function sameValue(a, b) {
  const type = typeOf(a);
  if (type !== typeOf(b)) return false;
  const x = a[type], y = b[type];
  switch (type) {
    case "N": return canonicalNumber(x) === canonicalNumber(y);
    case "SS": case "BS": return x.length === y.length && new Set([...x, ...y]).size === x.length;
    case "NS": return x.length === y.length && new Set([...x, ...y].map(canonicalNumber)).size === x.length;
    case "L": return x.length === y.length && x.every((item, index) => sameValue(item, y[index]));
    case "M": return sameItem(x, y);
    default: return x === y;
  }
}

export function sameItem(a, b) {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => key in b && sameValue(a[key], b[key]));
}

export function cellText(av, max = 120) {
  const type = typeOf(av);
  const v = av[type];
  let text;
  switch (type) {
    case "S": case "N": text = v; break;
    case "BOOL": text = String(v); break;
    case "NULL": text = "null"; break;
    case "B": text = `0x${[...base64ToBytes(v).slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("")}${v.length > 24 ? "…" : ""}`; break;
    case "SS": case "NS": text = `{${v.join(", ")}}`; break;
    case "BS": text = `{${v.length} binaries}`; break;
    default: text = stringifyLossless(wireToPlain(av), 0).replace(/\n/g, " ");
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The scalar text of a key attribute (S, N or B). */
export function keyText(av) { return av ? String(av[typeOf(av)]) : ""; }

export function keySchemaOf(table, indexName) {
  const schema = indexName
    ? [...(table.GlobalSecondaryIndexes || []), ...(table.LocalSecondaryIndexes || [])].find((i) => i.IndexName === indexName).KeySchema
    : table.KeySchema;
  const hash = schema.find((k) => k.KeyType === "HASH").AttributeName;
  const rangeEntry = schema.find((k) => k.KeyType === "RANGE");
  return { hash, range: rangeEntry ? rangeEntry.AttributeName : null };
}

export function attributeType(table, name) {
  const definition = (table.AttributeDefinitions || []).find((d) => d.AttributeName === name);
  return definition ? definition.AttributeType : "S";
}

export function primaryKeyOf(table, item) {
  const { hash, range } = keySchemaOf(table);
  const key = { [hash]: item[hash] };
  if (range) key[range] = item[range];
  return key;
}

const ENTITY_ATTRIBUTES = ["entityType", "EntityType", "entity_type", "_et", "__typename", "type", "Type"];

/** The entity type of an item in a single-table design: the sort key's prefix
 *  (USER#42 -> USER), else a conventional type attribute, else the partition key's prefix. */
export function entityTypeOf(item, hash, range) {
  const prefix = (av) => {
    if (!av || typeOf(av) !== "S") return null;
    const found = /^([A-Za-z][A-Za-z0-9_-]{0,40})[#|:]/.exec(av.S);
    return found ? found[1] : null;
  };
  const fromSort = range ? prefix(item[range]) : null;
  if (fromSort) return fromSort;
  for (const name of ENTITY_ATTRIBUTES) if (item[name] && typeOf(item[name]) === "S") return item[name].S;
  return prefix(item[hash]);
}

/** Approximate item size in bytes, by DynamoDB's rules (names + values). */
export function itemSize(item) {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += utf8Length(name) + valueSize(value);
  return size;
}

function valueSize(av) {
  const type = typeOf(av);
  const v = av[type];
  switch (type) {
    case "S": return utf8Length(v);
    case "N": return Math.ceil(v.replace(/^[-+]/, "").replace(/^0+/, "").length / 2) + 1;
    case "B": return atob(v).length;
    case "BOOL": case "NULL": return 1;
    case "SS": return v.reduce((n, s) => n + utf8Length(s), 0);
    case "NS": return v.reduce((n, s) => n + Math.ceil(s.length / 2) + 1, 0);
    case "BS": return v.reduce((n, s) => n + atob(s).length, 0);
    case "L": return 3 + v.reduce((n, x) => n + 1 + valueSize(x), 0);
    case "M": return 3 + Object.entries(v).reduce((n, [k, x]) => n + 1 + utf8Length(k) + valueSize(x), 0);
    default: return 0;
  }
}

function utf8Length(text) { return new TextEncoder().encode(text).length; }
