// Small DOM helpers: h() builds elements, modal/confirm/toast overlays, formatting.

let readonlyKey = false;
/** A read-only key: every control marked ``data-write`` is disabled (the server refuses writes anyway). */
export function setReadonly(on) { readonlyKey = Boolean(on); document.documentElement.classList.toggle("readonly", readonlyKey); }
export function isReadonly() { return readonlyKey; }

function lockWrite(el) {
  el.disabled = true;
  el.title = "This access key is read-only";
  // A view re-enabling its button after a call must not enable it again.
  Object.defineProperty(el, "disabled", { get: () => true, set: () => {}, configurable: true });
}

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "style") Object.assign(el.style, value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "value") el.value = value;
    else if (key === "checked" || key === "disabled" || key === "selected") el[key] = Boolean(value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  if (readonlyKey && attrs && attrs["data-write"]) lockWrite(el);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function select(options, value, attrs = {}) {
  return h("select", attrs, options.map((option) => {
    const [optionValue, label] = Array.isArray(option) ? option : [option, option];
    return h("option", { value: optionValue, selected: optionValue === value }, label);
  }));
}

export function field(label, control, hint) {
  return h("div", { class: "field" }, h("label", {}, label), control, hint ? h("span", { class: "hint" }, hint) : null);
}

let openModals = 0;
export function modalOpen() { return openModals > 0; }

/** Shows a dialog; resolves with the value of the action chosen (null on Escape). */
export function modal({ title, body, actions = [["Close", null]], wide = false, onOpen }) {
  return new Promise((resolve) => {
    const previous = document.activeElement;
    const close = (value) => {
      backdrop.remove();
      openModals -= 1;
      document.removeEventListener("keydown", onKey, true);
      if (previous && previous.focus) previous.focus();
      resolve(value);
    };
    const buttons = actions.map(([label, value, kind]) =>
      h("button", { class: kind || "", "data-action": label, onclick: async () => {
        const result = typeof value === "function" ? await value() : value;
        if (result !== undefined) close(result);
      } }, label));
    const dialog = h("div", { class: "modal" + (wide ? " wide" : ""), role: "dialog", "aria-modal": "true", "aria-label": title },
      h("header", {}, title), h("div", { class: "body" }, body), h("footer", {}, buttons));
    const backdrop = h("div", { class: "modal-backdrop", onmousedown: (event) => { if (event.target === backdrop) close(null); } }, dialog);
    const onKey = (event) => {
      if (event.key === "Escape") { event.stopPropagation(); close(null); }
    };
    document.addEventListener("keydown", onKey, true);
    document.body.append(backdrop);
    openModals += 1;
    const focusable = dialog.querySelector("input, textarea, select") || buttons[buttons.length - 1];
    if (focusable) focusable.focus();
    if (onOpen) onOpen(dialog, close);
  });
}

export function confirmDialog(title, message, confirmLabel = "Confirm", danger = false) {
  return modal({ title, body: h("p", {}, message), actions: [["Cancel", false], [confirmLabel, true, danger ? "danger solid" : "primary"]] })
    .then((value) => value === true);
}

export function toast(message, kind = "info", ms = 4500) {
  const box = document.getElementById("toasts");
  const el = h("div", { class: `toast ${kind}`, role: kind === "error" ? "alert" : "status" }, message);
  box.append(el);
  setTimeout(() => el.remove(), ms);
}

export function formatBytes(bytes) {
  if (bytes === undefined || bytes === null) return "—";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = Number(bytes);
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export function formatCount(count) {
  return count === undefined || count === null ? "—" : Number(count).toLocaleString("en-US");
}

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = h("textarea", { style: { position: "fixed", opacity: "0" } });
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  toast("Copied to the clipboard", "ok", 1800);
}

export function download(filename, text, type = "application/json") {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h("a", { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** A stable colour per entity type, readable on both themes. */
export function entityColor(name) {
  let hash = 0;
  for (const char of name) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return `hsl(${hash % 360} 55% 42%)`;
}

export function spinner() { return h("span", { class: "spinner", "aria-label": "loading" }); }
