// How a failed call is shown: one alert region, by JSON-RPC error code (CONTRACT.md, error tables).

import { token } from "./api.js";
import { el, fill } from "./dom.js";
import { markInvalid } from "./filters.js";

const region = () => document.getElementById("error");

function seconds(value) {
  return `${Math.ceil(value)} s`;
}

/** Heading and detail lines for an ApiError. */
export function describe(error) {
  const data = error.data || {};
  switch (error.code) {
    case -32001:
      // Truthful about the token this tab holds: missing, or sent and refused.
      return token()
        ? ["This token was refused.", ["The service does not know the token set for this tab: paste a valid agent token and press Use token."]]
        : ["A token is needed.", ["The service has auth on: paste an agent's bearer token above and press Use token."]];
    case -32002:
      return ["Rate limited.", [error.retryAfter !== null ? `Retry in ${seconds(error.retryAfter)}.` : "Retry shortly."]];
    case -32003:
      // A peer service's decision (getDecision with `peer`): that peer failed, not our store.
      if (typeof data.peer === "string") {
        return ["A peer service did not answer.", [`Peer ${data.peer}: ${error.message}. Its state is listed under the search form.`]];
      }
      return ["The store is down.", ["ChromaDB is unavailable or failing. Retry once it is back; /ready says when."]];
    case -32004:
      return ["This token lacks a scope.", [`The call needs the "${data.requiredScope ?? "?"}" scope.`]];
    case -32005:
      return ["The service is saturated.", [error.retryAfter !== null ? `Retry in ${seconds(error.retryAfter)}.` : "Retry shortly."]];
    case -32602: {
      const errors = Array.isArray(data.errors) ? data.errors : [];
      return ["Some fields are not valid.", errors.map((e) => `${e.field}: ${e.reason}`)];
    }
    case -32601:
      return ["The service does not offer this method.", ["It may be an older version than this console expects."]];
    case 0:
      return ["No answer from the service.", [error.message]];
    default:
      return [`Error ${error.code}.`, [error.message]];
  }
}

/** Show `error` in the alert region; for -32602 also mark the fields it names. */
export function showError(error) {
  const [title, lines] = describe(error);
  const node = region();
  node.dataset.code = String(error.code);
  if (error.code === -32001) node.dataset.token = token() ? "refused" : "missing";
  else delete node.dataset.token;
  if (error.retryAfter !== null && error.retryAfter !== undefined) node.dataset.retryAfter = String(error.retryAfter);
  else delete node.dataset.retryAfter;
  const list = lines.length ? el("ul", {}, ...lines.map((line) => el("li", {}, line))) : null;
  fill(node, el("strong", {}, title), list);
  node.hidden = false;
  const fields = error.code === -32602 && Array.isArray(error.data?.errors) ? error.data.errors.map((e) => e.field) : [];
  markInvalid(fields);
  if (error.code === -32001) document.getElementById("token").focus();
}

/** Hide the alert region and clear field marks. */
export function clearError() {
  const node = region();
  node.hidden = true;
  delete node.dataset.code;
  delete node.dataset.retryAfter;
  delete node.dataset.token;
  fill(node);
  markInvalid([]);
}
