// Search: cstp.queryDecisions with the query, every filter, the mode and maxDistance.

import { call } from "./api.js";
import { openDecision } from "./decision.js";
import { day, el, fill, fixed, text } from "./dom.js";
import { clearError, showError } from "./errors.js";
import { currentFilters, numberOf } from "./filters.js";

/** The params of the search form, as sent on the wire. */
export function searchParams() {
  const f = document.getElementById("search-form").elements;
  const params = { query: f.query.value };
  const filters = currentFilters();
  if (filters) params.filters = filters;
  if (f.retrievalMode.value) params.retrievalMode = f.retrievalMode.value;
  const maxDistance = numberOf(f.maxDistance);
  if (maxDistance !== undefined) params.maxDistance = maxDistance;
  const limit = numberOf(f.limit);
  if (limit !== undefined) params.limit = limit;
  return params;
}

function distanceBar(distance) {
  // Cosine distance in [0, 2], lower is closer: the bar is long for a close match.
  const closeness = distance === null ? 0 : Math.max(0, Math.min(1, 1 - distance / 2));
  const fillBar = el("span", { class: "bar-fill" });
  fillBar.style.width = `${(closeness * 100).toFixed(1)}%`;
  return el(
    "span",
    { class: "distance", title: "cosine distance, 0 (same) to 2 (opposite)" },
    el("span", { class: "bar", "aria-hidden": "true" }, fillBar),
    el("span", { class: "distance-value" }, `distance ${fixed(distance, 3)}`),
  );
}

function resultItem(decision) {
  const meta = [day(decision.date), text(decision.category), `confidence ${fixed(decision.confidence)}`,
    `stakes ${text(decision.stakes)}`, text(decision.status), `outcome ${text(decision.outcome)}`];
  const button = el(
    "button",
    { type: "button", class: "result", "data-id": decision.id },
    el("span", { class: "result-title" }, text(decision.title)),
    el("span", { class: "result-id" }, decision.id),
    el("span", { class: "result-meta" }, meta.join(" · ")),
    distanceBar(decision.distance),
  );
  button.addEventListener("click", () => openDecision(decision.id, button));
  return el("li", {}, button);
}

async function search(event) {
  event.preventDefault();
  const status = document.getElementById("search-status");
  const results = document.getElementById("results");
  fill(status, "Searching…");
  // busy, then done or failed: set before the call goes out, so a test can wait on it.
  status.dataset.state = "busy";
  delete results.dataset.total;
  try {
    const result = await call("cstp.queryDecisions", searchParams());
    clearError();
    fill(results, ...result.decisions.map(resultItem));
    results.dataset.total = String(result.total);
    fill(status, `${result.total} decision${result.total === 1 ? "" : "s"} in ${result.queryTimeMs} ms`);
    status.dataset.state = "done";
  } catch (error) {
    fill(status);
    showError(error);
    status.dataset.state = "failed";
  }
}

/** Wire the search form. */
export function setupSearch() {
  document.getElementById("search-form").addEventListener("submit", search);
}
