// Navigation helpers shared by the shell and the views (kept apart to avoid import cycles).

export const hooks = { pageKeys: null, render: () => {}, refreshSidebar: () => {} };

/** The current view's own keyboard handler: (event, typing) -> true when it used the key. */
export function setPageKeys(handler) { hooks.pageKeys = handler; }

export function go(hash) { if (location.hash === hash) hooks.render(); else location.hash = hash; }

export function tableHash(table, tab = "items", query = "") {
  return `#/t/${encodeURIComponent(table)}/${tab}${query ? `?${query}` : ""}`;
}

export function itemHash(table, key) {
  return tableHash(table, "item", key ? `key=${encodeURIComponent(JSON.stringify(key))}` : "new=1");
}

export function refreshSidebar() { return hooks.refreshSidebar(); }
