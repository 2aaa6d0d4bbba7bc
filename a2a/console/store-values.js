// The category, stakes and status values the store holds, offered in the filters: a datalist
// of categories, and the stakes and status boxes the store has values for (with counts).
// `storeValues` is the one source: cstp.getStats of the chosen tenant (stats.js), answered from the index at any size
// (byCategory and byStatus; stakes, which getStats does not break down, one filtered call
// per stakes value).

import { el, fill } from "./dom.js";
import { stats } from "./stats.js";
import { listedTenants } from "./tenant.js";

const STAKES = ["low", "medium", "high", "critical"];
const STATUS = ["proposed", "pending", "decided", "reviewed", "superseded", "deprecated", "rejected"];

function counted(rows, key) {
  return new Map(rows.filter((r) => r[key] !== null && r[key] !== "" && r.decisions > 0)
    .map((r) => [r[key], r.decisions]));
}

/** `{category, stakes, status}`: Maps of value -> decisions, from the store. Throws ApiError. */
export async function storeValues() {
  const [all, ...byStakes] = await Promise.all([
    stats({}),
    ...STAKES.map((stakes) => stats({ filters: { stakes: [stakes] } })),
  ]);
  const stakes = new Map(STAKES.map((value, i) => [value, byStakes[i].decisions])
    .filter(([, n]) => n > 0));
  return {
    category: counted(all.byCategory, "category"),
    stakes,
    status: counted(all.byStatus, "status"),
  };
}

function boxes(fieldset, name, known, counts) {
  const checked = new Set([...fieldset.querySelectorAll("input:checked")].map((b) => b.value));
  // Only values the wire accepts (files may carry others); checked ones stay offered.
  const offered = known.filter((v) => counts.has(v) || checked.has(v));
  const labels = offered.map((value) => el(
    "label", {},
    el("input", { type: "checkbox", name, value, checked: checked.has(value) }),
    ` ${value} `, el("span", { class: "count" }, `(${counts.get(value) ?? 0})`),
  ));
  // The legend stays put: chromium may lay a fieldset out 0 px wide when its rendered legend
  // is removed and added again inside a <details> being opened.
  for (const label of fieldset.querySelectorAll(":scope > label")) label.remove();
  fieldset.append(...labels);
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

/** Read the store's values and offer them; a failure leaves the filters as they are. With no
 * tenant listed (no token yet, or none of its tenants holds a decision) there is nothing to
 * offer, and no call is made. */
export async function refreshValues() {
  if (!listedTenants().length) return;
  try {
    offerValues(await storeValues());
  } catch {
    // The token may be missing or refused: the search that follows shows why.
  }
}
