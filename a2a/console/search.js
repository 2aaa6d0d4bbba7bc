// Search: cstp.queryDecisions with the query, every filter, the mode and maxDistance, and
// the service's peers when "Include peers" is ticked (peers.js). The result list says when
// it is a broad match (the result's `broadMatch`) or no match, as `cstp query` does
// (matching.js), and which peer service each decision came from.

import { call } from "./api.js";
import { openDecision } from "./decision.js";
import { day, el, fill, fixed, text } from "./dom.js";
import { clearError, showError } from "./errors.js";
import { collapseFiltersWhenNarrow, currentFilters, numberOf } from "./filters.js";
import { distanceShape, matchNote, matching } from "./matching.js";
import { showAnswerPeers, withPeers } from "./peers.js";
import { severalTenants, withTenant } from "./tenant.js";

/** The params of the search form, as sent on the wire ("All tenants": `tenant: "*"`;
 * "Include peers": `peers: "*"`). */
export function searchParams() {
  const f = document.getElementById("search-form").elements;
  const params = withPeers(withTenant({ query: f.query.value }));
  const filters = currentFilters();
  if (filters) params.filters = filters;
  if (f.retrievalMode.value) params.retrievalMode = f.retrievalMode.value;
  const maxDistance = numberOf(f.maxDistance);
  if (maxDistance !== undefined) params.maxDistance = maxDistance;
  const limit = numberOf(f.limit);
  if (limit !== undefined) params.limit = limit;
  return params;
}

function distanceBar(distance, threshold) {
  // Long for a close match, empty at the broad-match threshold; past it a stub in the
  // warning colour, so a good and a weak hit never look alike.
  const { closeness, weak } = distanceShape(distance, threshold);
  const fillBar = el("span", { class: "bar-fill" });
  fillBar.style.width = `${(closeness * 100).toFixed(1)}%`;
  const label = weak ? `distance ${fixed(distance, 3)} · weak` : `distance ${fixed(distance, 3)}`;
  return el(
    "span",
    {
      class: weak ? "distance weak" : "distance",
      "data-closeness": closeness.toFixed(3),
      "data-weak": weak ? "true" : "false",
      title: threshold === null
        ? "cosine distance, 0 (same) to 2 (opposite)"
        : `cosine distance, 0 (same) to 2 (opposite); past ${threshold} a match is weak`,
    },
    el("span", { class: "bar", "aria-hidden": "true" }, fillBar),
    el("span", { class: "distance-value" }, label),
  );
}

function resultItem(decision, threshold) {
  const meta = [day(decision.date), text(decision.category), `confidence ${fixed(decision.confidence)}`,
    `stakes ${text(decision.stakes)}`, text(decision.status), `outcome ${text(decision.outcome)}`];
  const tenant = decision.tenant ?? null;
  // A peer service's decision (`peer` its name; null or absent: this service's own).
  const peer = typeof decision.peer === "string" ? decision.peer : null;
  // The tenant is worth a chip only when there are several to tell apart.
  const chip = tenant !== null && severalTenants();
  const button = el(
    "button",
    { type: "button", class: "result", "data-id": decision.id, "data-tenant": tenant, "data-peer": peer },
    el("span", { class: "result-title" }, text(decision.title)),
    el("span", { class: "result-id" }, decision.id),
    peer !== null ? el("span", { class: "result-peer", title: "from this peer service" }, `peer ${peer}`) : null,
    chip ? el("span", { class: "result-tenant" }, `tenant ${tenant}`) : null,
    el("span", { class: "result-meta" }, meta.join(" · ")),
    distanceBar(decision.distance, threshold),
  );
  button.addEventListener("click", () => openDecision(decision.id, button, tenant, peer));
  return el("li", {}, button);
}

function showNote(id, note, kind) {
  const node = document.getElementById(id);
  fill(node, note ?? null);
  node.hidden = !note;
  if (kind) node.dataset.kind = kind;
  else delete node.dataset.kind;
}

/** Empty the result list and its notes: nothing stale stays on screen. */
function clearResults() {
  const results = document.getElementById("results");
  fill(results);
  delete results.dataset.total;
  showNote("match-note", null);
  showNote("search-note", null);
  showNote("stale-note", null);
}

/** The note of an answer served from the replica's memory while Chroma is away
(CONTRACT.md, Availability of reads: `stale.since`). */
function staleNote(stale) {
  if (!stale) return null;
  return `Chroma is unreachable: this answer comes from this replica's memory, as of ${stale.since}. Decisions recorded since may be missing.`;
}

/** The latest search: an answer to an earlier one (a re-run after a new token, a click
 * before the last answer came) arrives too late to be shown. */
let latest = 0;

async function search(event) {
  event.preventDefault();
  const mine = ++latest;
  const status = document.getElementById("search-status");
  fill(status, "Searching…");
  // busy, then done or failed: set before the call goes out, so a test can wait on it.
  status.dataset.state = "busy";
  clearResults();
  const params = searchParams();
  try {
    const [result, config] = await Promise.all([call("cstp.queryDecisions", params), matching()]);
    if (mine !== latest) return;
    clearError();
    const results = document.getElementById("results");
    const threshold = config.broadMatchDistance;
    fill(results, ...result.decisions.map((d) => resultItem(d, threshold)));
    // The service's own note (a category no stored decision has) says why better.
    const note = result.note ? null : matchNote(result, config);
    showNote("match-note", note?.text, note?.kind);
    showNote("search-note", result.note);
    showNote("stale-note", staleNote(result.stale), result.stale ? "stale" : null);
    results.dataset.total = String(result.total);
    const peers = showAnswerPeers(result);
    const took = `${result.total} decision${result.total === 1 ? "" : "s"} in ${result.queryTimeMs} ms`;
    fill(status, peers ? `${took} · ${peers}` : took);
    status.dataset.state = "done";
    collapseFiltersWhenNarrow();
  } catch (error) {
    if (mine !== latest) return;
    fill(status);
    showError(error);
    status.dataset.state = "failed";
  }
}

/** How many searches this page has started (a re-run after a new token is left out when
 * one started meanwhile). */
export function searchesStarted() {
  return latest;
}

/** Wire the search form. */
export function setupSearch() {
  document.getElementById("search-form").addEventListener("submit", search);
}
