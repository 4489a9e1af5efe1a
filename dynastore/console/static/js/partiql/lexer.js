// A PartiQL tokenizer, just enough for the console: the scan warning, completion and
// highlighting need to know words, quoted identifiers, strings, numbers, parameters and
// punctuation, not the full grammar (the server parses for real).

/** The keywords the editor offers (DynamoDB reserves many more words; quoted names avoid them all). */
export const KEYWORDS = [
  "SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "IN", "BETWEEN", "IS", "MISSING", "NULL", "EXISTS",
  "ORDER", "BY", "ASC", "DESC", "INSERT", "INTO", "VALUE", "UPDATE", "SET", "REMOVE", "DELETE",
  "RETURNING", "ALL", "OLD", "NEW", "MODIFIED", "TRUE", "FALSE",
];
export const FUNCTIONS = ["begins_with", "contains", "attribute_type", "size", "list_append", "set_add", "set_delete"];

const KEYWORD_SET = new Set(KEYWORDS);
const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const OPERATORS = ["<<", ">>", "<=", ">=", "<>", "!=", "||", "=", "<", ">", "(", ")", "[", "]", "{", "}", ",", ".", ":", "*", "+", "-", "/", "?", ";"];

export function isKeyword(word) { return KEYWORD_SET.has(String(word).toUpperCase()); }

/**
 * Tokens of ``text``: { type, value, start, end } with type one of word, quoted
 * (a "double-quoted" identifier, value unescaped), string ('single-quoted', value
 * unescaped), number, param (?), op; an unfinished quote has ``open: true``.
 * Comments (-- to the end of the line, /* ... *\/) and whitespace are skipped.
 */
export function tokenize(text) {
  const tokens = [];
  let at = 0;
  while (at < text.length) {
    const char = text[at];
    if (/\s/.test(char)) { at += 1; continue; }
    if (text.startsWith("--", at)) { const end = text.indexOf("\n", at); at = end < 0 ? text.length : end + 1; continue; }
    if (text.startsWith("/*", at)) { const end = text.indexOf("*/", at + 2); at = end < 0 ? text.length : end + 2; continue; }
    if (char === '"' || char === "'") { const token = quoted(text, at, char); tokens.push(token); at = token.end; continue; }
    WORD.lastIndex = at;
    let match = WORD.exec(text);
    if (match) { tokens.push({ type: "word", value: match[0], start: at, end: at + match[0].length }); at += match[0].length; continue; }
    NUMBER.lastIndex = at;
    match = NUMBER.exec(text);
    if (match) { tokens.push({ type: "number", value: match[0], start: at, end: at + match[0].length }); at += match[0].length; continue; }
    const op = OPERATORS.find((candidate) => text.startsWith(candidate, at));
    const value = op || char;
    tokens.push({ type: value === "?" ? "param" : "op", value, start: at, end: at + value.length });
    at += value.length;
  }
  return tokens;
}

/** A quoted identifier or string starting at ``start``; a doubled quote stands for itself. */
function quoted(text, start, quote) {
  let value = "";
  let at = start + 1;
  while (at < text.length) {
    if (text[at] === quote) {
      if (text[at + 1] === quote) { value += quote; at += 2; continue; }
      return { type: quote === '"' ? "quoted" : "string", value, start, end: at + 1 };
    }
    value += text[at];
    at += 1;
  }
  return { type: quote === '"' ? "quoted" : "string", value, start, end: text.length, open: true };
}

/** Is ``token`` the keyword ``word`` (case-insensitive; a quoted "SELECT" is a name, not a keyword)? */
export function isWord(token, word) { return Boolean(token) && token.type === "word" && token.value.toUpperCase() === word; }

export function quoteIdentifier(name) { return `"${String(name).replace(/"/g, '""')}"`; }
