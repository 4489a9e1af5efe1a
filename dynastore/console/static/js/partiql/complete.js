// Completion for the PartiQL editor: the table's attribute names (key schema, index key
// schemas, a sample of items), table and index names after FROM / INTO / UPDATE, and
// PartiQL's keywords and functions, offered for the word being typed. Names are inserted
// "double-quoted": DynamoDB reserves hundreds of words, and a quoted name is never one.

import { FUNCTIONS, KEYWORDS, isWord, quoteIdentifier, tokenize } from "./lexer.js";

/** Attribute names worth offering: keys first (table, then indexes), then the sample's by frequency. */
export function vocabularyOf(table, sampleItems = []) {
  const names = [];
  const add = (name) => { if (name && !names.includes(name)) names.push(name); };
  for (const key of table.KeySchema || []) add(key.AttributeName);
  for (const index of [...(table.GlobalSecondaryIndexes || []), ...(table.LocalSecondaryIndexes || [])]) {
    for (const key of index.KeySchema || []) add(key.AttributeName);
  }
  const counts = new Map();
  for (const item of sampleItems) for (const name of Object.keys(item)) counts.set(name, (counts.get(name) || 0) + 1);
  [...counts.keys()].sort((a, b) => counts.get(b) - counts.get(a) || a.localeCompare(b)).forEach(add);
  const indexes = [...(table.GlobalSecondaryIndexes || []), ...(table.LocalSecondaryIndexes || [])].map((i) => i.IndexName);
  return { attributes: names, tables: [table.TableName], indexes: { [table.TableName]: indexes } };
}

const TABLE_AFTER = ["FROM", "INTO", "UPDATE"];

/**
 * What to offer at ``cursor`` in ``text``: { from, to, prefix, items: [{ label, insert, kind }] }
 * or null. ``from``..``to`` is the text an item replaces. Nothing is offered inside a
 * string literal, nor for an empty word unless ``explicit`` (Ctrl+Space).
 */
export function completionsAt(text, cursor, vocabulary, { explicit = false, max = 12 } = {}) {
  const before = text.slice(0, cursor);
  const tokens = tokenize(before);
  const last = tokens[tokens.length - 1];
  let from = cursor;
  let prefix = "";
  let quoted = false;
  let previous;
  if (last && last.type === "string" && last.open) return null; // typing a string value
  if (last && last.type === "quoted" && last.open) {
    from = last.start; prefix = last.value; quoted = true; previous = tokens[tokens.length - 2];
  } else if (last && last.type === "word" && last.end === cursor) {
    from = last.start; prefix = last.value; previous = tokens[tokens.length - 2];
  } else {
    if (!explicit) return null;
    previous = last;
  }
  if (!explicit && !quoted && prefix.length < 1) return null;
  let to = cursor;
  if (quoted && text[cursor] === '"') to = cursor + 1; // replace the closing quote the user may already have

  const candidates = [];
  const wantsTable = TABLE_AFTER.some((word) => isWord(previous, word));
  const beforeDot = previous && previous.type === "op" && previous.value === "." ? tokens[tokens.indexOf(previous) - 1] : null;
  const tableBeforeDot = beforeDot && isWord(tokens[tokens.indexOf(beforeDot) - 1], "FROM") ? beforeDot.value : null;
  if (wantsTable) {
    for (const name of vocabulary.tables || []) candidates.push({ label: name, insert: quoteIdentifier(name), kind: "table" });
  } else if (tableBeforeDot !== null) {
    for (const name of (vocabulary.indexes || {})[tableBeforeDot] || []) candidates.push({ label: name, insert: quoteIdentifier(name), kind: "index" });
  } else {
    for (const name of vocabulary.attributes || []) candidates.push({ label: name, insert: quoteIdentifier(name), kind: "attribute" });
    if (!quoted) {
      for (const name of FUNCTIONS) candidates.push({ label: `${name}()`, insert: `${name}(`, kind: "function" });
      for (const word of KEYWORDS) candidates.push({ label: word, insert: word, kind: "keyword" });
    }
  }
  const lower = prefix.toLowerCase();
  const items = candidates.filter((item) => item.label.toLowerCase().startsWith(lower) && !(item.label === prefix && !quoted && item.kind !== "function"));
  if (!items.length) return null;
  return { from, to, prefix, items: items.slice(0, max) };
}

/** The text and cursor after choosing ``item`` of ``completion``. */
export function applyCompletion(text, completion, item) {
  const next = text.slice(0, completion.from) + item.insert + text.slice(completion.to);
  return { text: next, cursor: completion.from + item.insert.length };
}
