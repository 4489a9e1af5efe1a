// The console's only way to the database: DynamoDB API calls through the proxy.

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
    response = await fetch(`/console/api/${operation}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-dynastore-console": "1" },
      body: JSON.stringify(params),
    });
  } catch (error) {
    const failure = new ApiError("NetworkError", `The console server did not answer: ${error.message}`, 0, {});
    emit({ operation, ms: performance.now() - started, error: failure });
    throw failure;
  }
  const text = await response.text();
  let data = {};
  try { data = text ? JSON.parse(text) : {}; } catch { data = { message: text }; }
  const ms = performance.now() - started;
  if (!response.ok) {
    const error = new ApiError(data.__type || `HTTP ${response.status}`, data.message || data.Message || text, response.status, data);
    emit({ operation, ms, error, probe });
    throw error;
  }
  emit({ operation, ms, data });
  return data;
}

function emit(event) { for (const listener of listeners) listener(event); }

export async function describeTable(name, { fresh = false } = {}) {
  if (!fresh && tableCache.has(name)) return tableCache.get(name);
  const { Table } = await call("DescribeTable", { TableName: name });
  tableCache.set(name, Table);
  return Table;
}

export function forgetTable(name) { tableCache.delete(name); }

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

/** A short text for a ConsumedCapacity answer (a single object or a list). */
export function capacityText(consumed) {
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
  if (!parts.length) parts.push(`${trim(total)} CU`);
  return parts.join(" · ");
}

function trim(number) { return Number(number.toFixed(2)).toString(); }
