// JSON-RPC 2.0 over POST /cstp: the only thing this page talks to (CONTRACT.md, "The operator console").

const TOKEN_KEY = "cstp.console.token";
const ENDPOINT = "cstp"; // relative: /cstp beside /console, also behind a path prefix
let nextId = 1;

/** A failed call. `code`: the JSON-RPC error code, -32001 for HTTP 401, 0 when no JSON-RPC answer came. */
export class ApiError extends Error {
  constructor(code, message, data = null, status = 0, retryAfter = null) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.data = data;
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** The token kept for this tab (sessionStorage: never a URL, never localStorage), or "". */
export function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? "";
}

/** Keep `value` as this tab's token; an empty value forgets it (auth off needs none). */
export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

function headers(bearer) {
  const result = { "Content-Type": "application/json", Accept: "application/json" };
  // No token, no header: "Bearer " with nothing after it is a malformed credential.
  if (bearer) result.Authorization = `Bearer ${bearer}`;
  return result;
}

function retryAfterOf(response, data) {
  if (data && typeof data.retryAfter === "number") return data.retryAfter;
  const header = Number(response.headers.get("Retry-After"));
  return Number.isFinite(header) && header > 0 ? header : null;
}

/**
 * Tell the page what the service made of the token `sent`: "refused" on HTTP 401, "accepted"
 * on any other JSON-RPC answer (auth off accepts no token). A `cstp-token` event on document,
 * detail `{verdict, token}`: the page ignores answers about a token it no longer holds.
 */
function report(verdict, sent) {
  document.dispatchEvent(new CustomEvent("cstp-token", { detail: { verdict, token: sent } }));
}

/** The `result` of one call of `method` with `params` by name; throws ApiError. */
export async function call(method, params = {}) {
  const body = JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params });
  const sent = token();
  let response;
  try {
    response = await fetch(ENDPOINT, {
      method: "POST", headers: headers(sent), body, cache: "no-store", credentials: "omit",
    });
  } catch {
    throw new ApiError(0, "The service could not be reached.");
  }
  if (response.status === 401) {
    report("refused", sent);
    throw new ApiError(-32001, "Unauthorized", null, 401);
  }
  let payload;
  try {
    payload = await response.json();
  } catch {
    throw new ApiError(0, `HTTP ${response.status}: the answer is not JSON.`, null, response.status);
  }
  report("accepted", sent);
  if (payload && payload.error) {
    const { code, message, data } = payload.error;
    throw new ApiError(code, message, data ?? null, response.status, retryAfterOf(response, data));
  }
  if (!payload || !("result" in payload)) {
    throw new ApiError(0, `HTTP ${response.status}: not a JSON-RPC response.`, null, response.status);
  }
  return payload.result;
}
