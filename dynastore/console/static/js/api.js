// The console's only way to the database: DynamoDB API calls through the proxy.

import { session } from "./session.js";
import { signRequest } from "./sigv4.js";

const TARGET_PREFIX = "DynamoDB_20120810.";
const JSON_1_0 = "application/x-amz-json-1.0";
const listeners = new Set();
const tableCache = new Map();

export class ApiError extends Error {
  constructor(type, message, status, data) {
    super(message || type);
    this.type = type;
    this.code = String(type || "").split("#").pop();
    this.status = status;
    this.data = data;
  }
}

export function onCall(listener) { listeners.add(listener); }

/** One DynamoDB call. ``probe`` marks a call made to validate (an error is its expected answer). */
export async function call(operation, params = {}, { probe = false } = {}) {
  const started = performance.now();
  let response;
  try {
    response = await send(`/console/api/${operation}`, { body: JSON.stringify(params), target: TARGET_PREFIX + operation, signedPath: "/" });
  } catch (error) {
    const failure = error instanceof ApiError ? error : new ApiError("NetworkError", `The console server did not answer: ${error.message}`, 0, {});
    emit({ operation, ms: performance.now() - started, error: failure });
    throw failure;
  }
  const { ok, status, data, text } = await readAnswer(response);
  const ms = performance.now() - started;
  if (!ok) {
    const error = answerError(status, data, text);
    emit({ operation, ms, error, probe });
    throw error;
  }
  emit({ operation, ms, data });
  return data;
}

/**
 * One request through the console's proxy. Without sign-in it names the region in
 * X-Dynastore-Region; with sign-in it is signed here, SigV4 over the request the server
 * will verify: ``method`` on ``signedPath`` ("/" for an API call, the admin path for an
 * admin route), this page's host, the content type, the target and the body.
 */
export async function send(url, { method = "POST", body = "", target = null, signedPath = "/" } = {}) {
  const headers = { "x-dynastore-console": "1", "content-type": target ? JSON_1_0 : "application/json" };
  if (target) headers["x-amz-target"] = target;
  const bytes = method === "GET" || method === "HEAD" ? new Uint8Array(0) : new TextEncoder().encode(body);
  if (session.signin) {
    if (!session.credentials) throw new ApiError("NotSignedIn", "Sign in first", 0, {});
    const signed = { host: location.host, "content-type": headers["content-type"] };
    if (target) signed["x-amz-target"] = target;
    Object.assign(headers, await signRequest({
      method, path: signedPath, headers: signed, body: bytes, credentials: session.credentials, region: session.region,
    }));
  } else {
    headers["x-dynastore-region"] = session.region;
  }
  return fetch(url, { method, headers, body: bytes.length || method === "POST" ? bytes : undefined, credentials: "same-origin" });
}

async function readAnswer(response) {
  const text = await response.text();
  let data = {};
  try { data = text ? JSON.parse(text) : {}; } catch { data = { message: text }; }
  return { ok: response.ok, status: response.status, data, text };
}

function answerError(status, data, text) {
  return new ApiError(data.__type || data.code || `HTTP ${status}`, data.message || data.Message || text, status, data);
}

/** A dynastore admin route through /console/admin/<name>: ``{ ok, status, data, error }``, never throws. */
export async function admin(name, { method = "GET", body = "" } = {}) {
  let response;
  try {
    response = await send(`/console/admin/${name}`, { method, body, signedPath: `/_dynastore/${name}` });
  } catch (error) {
    const failure = error instanceof ApiError ? error : new ApiError("NetworkError", `The console server did not answer: ${error.message}`, 0, {});
    return { ok: false, status: 0, data: { message: failure.message }, error: failure };
  }
  const answer = await readAnswer(response);
  return { ...answer, error: answer.ok ? null : answerError(answer.status, answer.data, answer.text) };
}

/** Who the page is signed in as and where: GET /_dynastore/identity of the endpoint. */
export async function fetchIdentity() {
  const answer = await admin("identity");
  if (answer.ok) session.identity = answer.data;
  return answer;
}

function emit(event) { for (const listener of listeners) listener(event); }

export async function describeTable(name, { fresh = false } = {}) {
  if (!fresh && tableCache.has(name)) return tableCache.get(name);
  const { Table } = await call("DescribeTable", { TableName: name });
  tableCache.set(name, Table);
  return Table;
}

export function forgetTable(name) { tableCache.delete(name); }
export function forgetAllTables() { tableCache.clear(); }

export async function listAllTables() {
  const names = [];
  let start;
  do {
    const page = await call("ListTables", start ? { ExclusiveStartTableName: start } : {});
    names.push(...(page.TableNames || []));
    start = page.LastEvaluatedTableName;
  } while (start);
  return names;
}

let config = null;
export async function consoleConfig() {
  if (config) return config;
  try {
    const response = await fetch("/console/config.json", { headers: { "x-dynastore-console": "1" } });
    config = response.ok ? await response.json() : {};
  } catch { config = {}; }
  if (!config.endpoint) config.endpoint = location.origin;
  return config;
}

/** A short text for a ConsumedCapacity answer (a single object or a list).
 * DynamoDB splits reads from writes only for transactions; ``unit`` names the
 * aggregate of a plain call ("RCU" for a read, "WCU" for a write). */
export function capacityText(consumed, unit = "CU") {
  if (!consumed) return null;
  const list = Array.isArray(consumed) ? consumed : [consumed];
  const parts = [];
  let read = 0, write = 0, total = 0;
  for (const entry of list) {
    read += entry.ReadCapacityUnits || 0;
    write += entry.WriteCapacityUnits || 0;
    total += entry.CapacityUnits || 0;
  }
  if (read) parts.push(`${trim(read)} RCU`);
  if (write) parts.push(`${trim(write)} WCU`);
  if (!parts.length) parts.push(`${trim(total)} ${unit}`);
  return parts.join(" · ");
}

function trim(number) { return Number(number.toFixed(2)).toString(); }
