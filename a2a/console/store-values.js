// The category, stakes and status values the store holds, offered in the filters: a datalist
// of categories, and the stakes and status boxes the store has values for (with counts).
// `storeValues` is the one source: today it pages cstp.listDecisions; cstp.getStats (its
// byCategory and byStatus) can replace it without touching the rest.

import { call } from "./api.js";
import { el, fill } from "./dom.js";

/** Most listDecisions pages read (100 decisions each): the values of a larger store are a sample. */
const MAX_PAGES = 20;
const STAKES = ["low", "medium", "high", "critical"];
const STATUS = ["proposed", "pending", "decided", "reviewed", "superseded", "deprecated", "rejected"];

function count(map, value) {
  if (value !== null && value !== undefined && value !== "") map.set(value, (map.get(value) ?? 0) + 1);
}

/** `{category, stakes, status}`: Maps of value -> decisions, from the store. Throws ApiError. */
export async function storeValues() {
  const values = { category: new Map(), stakes: new Map(), status: new Map() };
  let cursor = null;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const result = await call("cstp.listDecisions", cursor ? { limit: 100, cursor } : { limit: 100 });
    for (const d of result.decisions) {
      count(values.category, d.category);
      count(values.stakes, d.stakes);
      count(values.status, d.status);
    }
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return values;
}

function boxes(fieldset, name, known, counts) {
  const checked = new Set([...fieldset.querySelectorAll("input:checked")].map((b) => b.value));
  // Only values the wire accepts (files may carry others); checked ones stay offered.
  const offered = known.filter((v) => counts.has(v) || checked.has(v));
  const legend = fieldset.querySelector("legend");
  const labels = offered.map((value) => el(
    "label", {},
    el("input", { type: "checkbox", name, value, checked: checked.has(value) }),
    ` ${value} `, el("span", { class: "count" }, `(${counts.get(value) ?? 0})`),
  ));
  fill(fieldset, legend, ...labels);
}

/** Offer `values` (from storeValues) in the filters form. */
export function offerValues(values) {
  const categories = [...values.category.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  fill(document.getElementById("category-options"),
    ...categories.map(([value, n]) => el("option", { value }, `${n} decisions`)));
  const form = document.getElementById("filters");
  form.dataset.offered = "store";
  if (values.stakes.size) boxes(form.querySelector("[data-field='filters.stakes']"), "stakes", STAKES, values.stakes);
  if (values.status.size) boxes(form.querySelector("[data-field='filters.status']"), "status", STATUS, values.status);
}

/** Read the store's values and offer them; a failure leaves the filters as they are. */
export async function refreshValues() {
  try {
    offerValues(await storeValues());
  } catch {
    // The token may be missing or refused: the search that follows shows why.
  }
}
