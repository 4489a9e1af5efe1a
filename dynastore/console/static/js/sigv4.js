// AWS Signature Version 4 in the browser, as botocore's SigV4Auth signs a request:
// the canonical request (method, URI, empty query, the lower-cased sorted headers with
// their values trimmed, the signed header list, the body's SHA-256), the string to sign,
// and the key derived from the secret, the date, the region and the service.
//
// WebCrypto (crypto.subtle) does the hashing when the page has it. A page served over
// http:// from a host other than localhost is not a secure context and has no
// crypto.subtle, so a small SHA-256 / HMAC-SHA256 written here takes over.

const encoder = new TextEncoder();
const ALGORITHM = "AWS4-HMAC-SHA256";

/** The page's crypto.subtle, or null when the context is not secure. */
export function defaultSubtle() {
  return (globalThis.crypto && globalThis.crypto.subtle) || null;
}

function bytesOf(data) { return typeof data === "string" ? encoder.encode(data) : data; }

export function hex(bytes) {
  let text = "";
  for (const byte of bytes) text += byte.toString(16).padStart(2, "0");
  return text;
}

// --- SHA-256 (FIPS 180-4) and HMAC (RFC 2104), for pages without crypto.subtle ----------
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** SHA-256 of a Uint8Array, in plain JavaScript. */
export function sha256Fallback(data) {
  const length = data.length;
  const blocks = Math.ceil((length + 9) / 64);
  const padded = new Uint8Array(blocks * 64);
  padded.set(data);
  padded[length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(length / 0x20000000), false);
  view.setUint32(padded.length - 4, (length * 8) >>> 0, false);
  const state = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let block = 0; block < blocks; block += 1) {
    for (let i = 0; i < 16; i += 1) w[i] = view.getUint32(block * 64 + i * 4, false);
    for (let i = 16; i < 64; i += 1) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, h] = state;
    for (let i = 0; i < 64; i += 1) {
      const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      h = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
    }
    state[0] += a; state[1] += b; state[2] += c; state[3] += d;
    state[4] += e; state[5] += f; state[6] += g; state[7] += h;
  }
  const digest = new Uint8Array(32);
  const out = new DataView(digest.buffer);
  for (let i = 0; i < 8; i += 1) out.setUint32(i * 4, state[i], false);
  return digest;
}

/** HMAC-SHA256 of ``data`` under ``key`` (both Uint8Array), in plain JavaScript. */
export function hmacFallback(key, data) {
  let block = key.length > 64 ? sha256Fallback(key) : key;
  const padded = new Uint8Array(64);
  padded.set(block);
  const inner = new Uint8Array(64 + data.length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i += 1) { inner[i] = padded[i] ^ 0x36; outer[i] = padded[i] ^ 0x5c; }
  inner.set(data, 64);
  outer.set(sha256Fallback(inner), 64);
  block = sha256Fallback(outer);
  return block;
}

// --- the same through WebCrypto, or the fallback ---------------------------------------
export async function sha256(data, subtle = defaultSubtle()) {
  const bytes = bytesOf(data);
  if (!subtle) return sha256Fallback(bytes);
  return new Uint8Array(await subtle.digest("SHA-256", bytes));
}

export async function hmac(key, data, subtle = defaultSubtle()) {
  const keyBytes = bytesOf(key);
  const bytes = bytesOf(data);
  if (!subtle) return hmacFallback(keyBytes, bytes);
  const imported = await subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await subtle.sign("HMAC", imported, bytes));
}

// --- SigV4 ------------------------------------------------------------------------------
/** 20240102T030405Z, the form of X-Amz-Date. */
export function amzDate(date) {
  return date.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
}

/** The URI-encoded path, each segment encoded as RFC 3986 asks (unreserved kept). */
export function canonicalUri(path) {
  return (path || "/").split("/").map((segment) =>
    encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join("/");
}

function trimAll(value) { return String(value).trim().split(/\s+/).join(" "); }

/**
 * Signs one request. ``headers`` holds the headers to sign by lower-case name (at least
 * ``host``); ``body`` is a string or a Uint8Array. Returns the headers to add:
 * ``x-amz-date``, ``authorization`` and, with a session token, ``x-amz-security-token``.
 */
export async function signRequest({
  method, path = "/", headers, body = "", credentials, region, service = "dynamodb",
  now = new Date(), subtle = defaultSubtle(),
}) {
  const stamp = amzDate(now);
  const day = stamp.slice(0, 8);
  const added = { "x-amz-date": stamp };
  if (credentials.sessionToken) added["x-amz-security-token"] = credentials.sessionToken;
  const all = {};
  for (const [name, value] of Object.entries({ ...headers, ...added })) all[name.toLowerCase().trim()] = value;
  const names = Object.keys(all).sort();
  const signedHeaders = names.join(";");
  const canonicalRequest = [
    method.toUpperCase(),
    canonicalUri(path),
    "",
    names.map((name) => `${name}:${trimAll(all[name])}`).join("\n") + "\n",
    signedHeaders,
    hex(await sha256(bytesOf(body), subtle)),
  ].join("\n");
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = [ALGORITHM, stamp, scope, hex(await sha256(canonicalRequest, subtle))].join("\n");
  let key = await hmac(`AWS4${credentials.secretAccessKey}`, day, subtle);
  key = await hmac(key, region, subtle);
  key = await hmac(key, service, subtle);
  key = await hmac(key, "aws4_request", subtle);
  const signature = hex(await hmac(key, stringToSign, subtle));
  added.authorization = `${ALGORITHM} Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return added;
}
