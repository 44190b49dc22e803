// The only module that talks to the server: the public JSON API under /api.

const TOKEN_KEY = "kalah-tuner.token";

export function getToken() {
  try {
    return localStorage.getItem(TOKEN_KEY) || "";
  } catch {
    return "";
  }
}

export function setToken(token) {
  try {
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  } catch {
    // Private browsing may forbid storage; the token then lives for this page only.
  }
}

/** An error answer of the API: `status`, `field` (dotted path or null) and `message`. */
export class ApiError extends Error {
  constructor(status, message, field = null, body = null) {
    super(message);
    this.status = status;
    this.field = field;
    this.body = body;
  }
}

// Relative to the page so the dashboard also works behind a reverse proxy under a prefix.
export function apiUrl(path) {
  return new URL("api/" + path.replace(/^\/+/, ""), document.baseURI).toString();
}

/**
 * `timeoutMs`: give up after this long (a request that hangs, because the browser has no
 * connection left for it or the server is stuck, then fails with a message instead).
 */
export async function request(method, path, body, { timeoutMs = 0, token: given = null } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const token = given ?? getToken();
  // GETs are open; only state changes need the token (and sending it on GETs would leak it
  // into logs of proxies that record headers for no gain).
  if (token && method !== "GET") headers.Authorization = `Bearer ${token}`;
  let resp;
  const abort = timeoutMs ? new AbortController() : null;
  const timer = abort ? setTimeout(() => abort.abort(), timeoutMs) : null;
  try {
    resp = await fetch(apiUrl(path), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: abort ? abort.signal : undefined,
    });
  } catch (e) {
    if (abort && abort.signal.aborted) throw new ApiError(0, `the server did not answer within ${Math.round(timeoutMs / 1000)} s`);
    throw new ApiError(0, `cannot reach the server (${e.message})`);
  } finally {
    clearTimeout(timer);
  }
  if (resp.status === 204) return null;
  const text = await resp.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      if (resp.ok) throw new ApiError(resp.status, `the server sent something that is not JSON`);
    }
  }
  if (!resp.ok) {
    const err = data && data.error;
    let message = (err && err.message) || `${resp.status} ${resp.statusText}`;
    if (resp.status === 401 && !token) message += " (set the API token under Settings)";
    throw new ApiError(resp.status, message, (err && err.field) || null, data);
  }
  return data;
}

/** How long Cancel, Resume and Delete wait for an answer before they say they failed. */
const ACTION_TIMEOUT_MS = 20000;
/** Points of a run's curve a request asks for at once (the server gives up to 5000). */
const GENERATIONS_PAGE = 1000;

export const api = {
  get: (path) => request("GET", path),
  post: (path, body = {}) => request("POST", path, body),
  del: (path) => request("DELETE", path),

  // The list comes in pages; the dashboard shows every run, so it follows the cursors. The
  // first page is asked for without a limit: that one the server keeps ready between changes,
  // and it is the one every open runs page polls (the browser revalidates it by its ETag, so an
  // unchanged list costs a 304). Lists show no config or weights: `fields=summary` leaves them
  // out.
  runs: async () => {
    let runs = [];
    let cursor = null;
    do {
      const page = await request(
        "GET",
        cursor ? `runs?fields=summary&limit=500&cursor=${encodeURIComponent(cursor)}` : "runs?fields=summary",
      );
      runs = runs.concat(page.runs);
      cursor = page.next_cursor;
    } while (cursor);
    return { runs };
  },
  run: (id) => request("GET", `runs/${encodeURIComponent(id)}`),
  createRun: (body) => request("POST", "runs", body),
  // A dry run of createRun: the config the run would get and its cost, nothing stored.
  estimateRun: (body) => request("POST", "runs/estimate", body, { timeoutMs: 10000 }),
  cancelRun: (id) => request("POST", `runs/${encodeURIComponent(id)}/cancel`, {}, { timeoutMs: ACTION_TIMEOUT_MS }),
  resumeRun: (id) => request("POST", `runs/${encodeURIComponent(id)}/resume`, {}, { timeoutMs: ACTION_TIMEOUT_MS }),
  deleteRun: (id) => request("DELETE", `runs/${encodeURIComponent(id)}`, undefined, { timeoutMs: ACTION_TIMEOUT_MS }),
  describeRun: (id, body) => request("PATCH", `runs/${encodeURIComponent(id)}`, body),
  // A long run's curve comes a page at a time (each small enough to arrive well within a
  // request's time limit); the caller gets all of it.
  generations: async (id, since) => {
    const all = [];
    let from = since;
    for (;;) {
      const page = await request(
        "GET",
        `runs/${encodeURIComponent(id)}/generations?limit=${GENERATIONS_PAGE}` + (from == null ? "" : `&since=${from}`),
      );
      all.push(...(page.generations || []));
      if (page.next_since == null) return { ...page, generations: all };
      from = page.next_since;
    }
  },
  generation: (id, g) => request("GET", `runs/${encodeURIComponent(id)}/generations/${g}`),
  exportUrl: (id) => apiUrl(`runs/${encodeURIComponent(id)}/export`),
  eventsUrl: (id) => apiUrl(`runs/${encodeURIComponent(id)}/events`),
  health: () => request("GET", "healthz"),
  /**
   * Whether the server takes changes with `token` ("" for none): "ok", "refused" (401), or
   * "unknown" (no answer). `POST /api/token-check` changes nothing and answers 204 when the
   * token is taken, so a good token costs no error in the console.
   */
  checkToken: async (token) => {
    try {
      await request("POST", "token-check", undefined, { token, timeoutMs: 10000 });
      return "ok";
    } catch (e) {
      return e.status === 401 ? "refused" : "unknown";
    }
  },
  agents: () => request("GET", "agents"),
  configSchema: () => request("GET", "config-schema"),
  move: (agent, position, seed, pie = false) => request("POST", "move", { agent, position, seed, pie }),
  position: (position, move, pie = false) => request("POST", "position", { position, move, pie }),
  start: (pits, seeds) => request("GET", `position/start?pits=${pits}&seeds=${seeds}`),
  tournament: (body) => request("POST", "tournaments", body),
  tournaments: () => request("GET", "tournaments"),
  tournamentStatus: (id) => request("GET", `tournaments/${encodeURIComponent(id)}`),
  cancelTournament: (id) => request("POST", `tournaments/${encodeURIComponent(id)}/cancel`, {}),
};
