// The PartiQL editor's history: the statements run, newest first, kept in localStorage
// (statements are not secrets; the signing key stays in sessionStorage).

export const HISTORY_KEY = "dynastore.partiql.history";
export const HISTORY_MAX = 50;

const same = (a, b) => a.statement === b.statement && JSON.stringify(a.parameters || []) === JSON.stringify(b.parameters || []) && a.table === b.table;

/** ``history`` with ``entry`` ({ statement, parameters, table, at }) first and no older copy of it. */
export function remember(history, entry, max = HISTORY_MAX) {
  return [entry, ...history.filter((old) => !same(old, entry))].slice(0, max);
}

export function loadHistory(storage) {
  try {
    const list = JSON.parse(storage.getItem(HISTORY_KEY) || "[]");
    return Array.isArray(list) ? list.filter((entry) => entry && typeof entry.statement === "string") : [];
  } catch { return []; }
}

export function saveHistory(storage, history) {
  try { storage.setItem(HISTORY_KEY, JSON.stringify(history)); } catch { /* storage full or disabled: kept until reload */ }
}
