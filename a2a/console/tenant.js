// The tenant picker: the tenants this token may use (cstp.listTenants), the one chosen, and
// `tenant` on the params of every call the page makes (CONTRACT.md, Tenants).

import { call } from "./api.js";
import { el, fill } from "./dom.js";

/** The picker's value for every granted tenant (org-level search). */
export const EVERY = "*";

// [{name, decisions}] from the last cstp.listTenants; [] when it failed or listed none.
let listed = [];

const picker = () => document.getElementById("tenant");

/** The tenant chosen: a name, EVERY, or null when none was listed (calls then name none: the
 * token's one tenant, or `default` with auth off). */
export function chosenTenant() {
  return picker().value || null;
}

/** The names cstp.listTenants gave, sorted by name. */
export function listedTenants() {
  return listed.map((t) => t.name);
}

/** One tenant of ours for a call that takes no "*" but reads no tenant's data (getDecision
 * of a peer's decision): the chosen one, or the first listed with "All tenants"; null when
 * none was listed (the call then names none). */
export function ownTenant() {
  const chosen = chosenTenant();
  return chosen === EVERY ? (listed[0]?.name ?? null) : chosen;
}

/** `params` with `tenant` (default: the chosen one) when there is one. */
export function withTenant(params, tenant = chosenTenant()) {
  return tenant ? { ...params, tenant } : params;
}

/** Several tenants to tell apart: the picker shows, and so does each result's tenant. */
export function severalTenants() {
  return listed.length > 1;
}

/** Fill the picker from cstp.listTenants, keeping the choice when it is still listed. With
 * one tenant or none the picker is hidden; with several, "All tenants" comes first and is
 * chosen, so a first search covers every tenant the token may read. */
export async function loadTenants() {
  const before = picker().value;
  try {
    listed = (await call("cstp.listTenants", {})).tenants;
  } catch {
    // No token yet, or a refused one: the view's next call shows why.
    listed = [];
  }
  const options = listed.map((t) => el("option", { value: t.name }, `${t.name} (${t.decisions})`));
  if (listed.length > 1) options.unshift(el("option", { value: EVERY }, "All tenants"));
  fill(picker(), ...options);
  const values = options.map((o) => o.value);
  picker().value = values.includes(before) ? before : (values[0] ?? "");
  picker().dataset.listed = String(listed.length);
  document.getElementById("tenant-field").hidden = !severalTenants();
  document.getElementById("browse-table").dataset.tenants = String(listed.length);
}

/** Call `onChange` whenever the user picks another tenant. */
export function setupTenants(onChange) {
  picker().addEventListener("change", onChange);
}
