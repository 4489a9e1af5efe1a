// Where the console's calls go: the region picked and, when the server verifies
// signatures (`dynastore serve --credentials`), the key the user signed in with.
// Both live in sessionStorage only (this tab, until it closes or the user signs out);
// the secret never leaves the page: it only signs.

export const REGION_PATTERN = /^[a-z]{2}(-[a-z]+)+-\d+$/;
const REGION_KEY = "dynastore.region";
const CREDENTIALS_KEY = "dynastore.credentials";

export const session = { signin: false, region: "us-east-1", credentials: null, identity: null };

function stored(key) {
  try { return sessionStorage.getItem(key); } catch { return null; }
}

function store(key, value) {
  try {
    if (value === null) sessionStorage.removeItem(key);
    else sessionStorage.setItem(key, value);
  } catch { /* storage disabled: the choice lasts until reload */ }
}

/** Reads the saved region and key; ``config`` is /console/config.json. */
export function initSession(config) {
  session.signin = Boolean(config.signin);
  const saved = stored(REGION_KEY);
  session.region = saved && REGION_PATTERN.test(saved) ? saved : config.region || "us-east-1";
  session.credentials = null;
  if (session.signin) {
    try {
      const saved = JSON.parse(stored(CREDENTIALS_KEY) || "null");
      if (saved && saved.accessKeyId && saved.secretAccessKey) session.credentials = saved;
    } catch { /* unreadable: sign in again */ }
  }
}

export function validRegion(text) { return REGION_PATTERN.test(text) && text.length <= 64; }

export function setRegion(region) {
  if (!validRegion(region)) throw new Error(`${JSON.stringify(region)} is not a region name such as us-east-1`);
  session.region = region;
  store(REGION_KEY, region);
}

/** Uses ``credentials`` for the calls that follow; ``remember`` keeps them for this tab. */
export function setCredentials(credentials, { remember = true } = {}) {
  session.credentials = credentials;
  if (!credentials) store(CREDENTIALS_KEY, null);
  else if (remember) store(CREDENTIALS_KEY, JSON.stringify(credentials));
}

export function signOut() {
  session.credentials = null;
  session.identity = null;
  try { sessionStorage.clear(); } catch { /* nothing stored */ }
}
