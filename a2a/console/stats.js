// cstp.getStats for the chosen tenant. getStats takes no "*": for every tenant ("All tenants")
// it is asked of each listed tenant and the counts are summed (CONTRACT.md, Tenants).

import { call } from "./api.js";
import { EVERY, chosenTenant, listedTenants, withTenant } from "./tenant.js";

function summed(rows, key) {
  const totals = new Map();
  for (const row of rows) totals.set(row[key], (totals.get(row[key]) ?? 0) + row.decisions);
  // As the service orders them: by count descending, then by value (absent last).
  return [...totals.entries()]
    .map(([value, decisions]) => ({ [key]: value, decisions }))
    .sort((a, b) => b.decisions - a.decisions || (a[key] === null) - (b[key] === null)
      || String(a[key] ?? "").localeCompare(String(b[key] ?? "")));
}

function months(answers) {
  const byMonth = new Map();
  for (const m of answers.flatMap((a) => a.byMonth)) {
    const outcomes = byMonth.get(m.month) ?? {};
    for (const [outcome, n] of Object.entries(m.outcomes)) outcomes[outcome] = (outcomes[outcome] ?? 0) + n;
    byMonth.set(m.month, outcomes);
  }
  return [...byMonth.keys()].sort().map((month) => ({ month, outcomes: byMonth.get(month) }));
}

/** The cstp.getStats result for `params` in the chosen tenant (summed over every listed
 * tenant for "All tenants"). Throws ApiError. */
export async function stats(params) {
  if (chosenTenant() !== EVERY) return call("cstp.getStats", withTenant(params));
  const answers = await Promise.all(
    listedTenants().map((tenant) => call("cstp.getStats", withTenant(params, tenant))));
  const sum = (key) => answers.reduce((total, a) => total + a[key], 0);
  return {
    decisions: sum("decisions"),
    undated: sum("undated"),
    byMonth: months(answers),
    byCategory: summed(answers.flatMap((a) => a.byCategory), "category"),
    byStatus: summed(answers.flatMap((a) => a.byStatus), "status"),
    byAgent: summed(answers.flatMap((a) => a.byAgent), "agent"),
  };
}
