// Calibration: the reliability diagram, Brier score and per-category table (cstp.getCalibration),
// and decisions per month by outcome, counted from cstp.listDecisions pages. Charts: Chart.js (vendored).

import { call } from "./api.js";
import { el, fill, fixed, text } from "./dom.js";
import { clearError, showError } from "./errors.js";
import { currentFilters, numberOf } from "./filters.js";

/** Most listDecisions pages read for the month chart (100 decisions each). */
const MAX_PAGES = 50;
const OUTCOMES = ["success", "partial", "failure", "abandoned", "pending"];
const COLOURS = {
  success: "#2e7d32", partial: "#f9a825", failure: "#c62828", abandoned: "#6d4c41",
  pending: "#1565c0", other: "#7b1fa2", none: "#9e9e9e",
};
const charts = {};

function draw(id, config) {
  charts[id]?.destroy();
  // Fixed size from CSS, no animation: the same data always draws the same picture.
  config.options = { responsive: true, maintainAspectRatio: false, animation: false, ...config.options };
  charts[id] = new window.Chart(document.getElementById(id), config);
}

function reliability(bins) {
  const observed = bins.filter((b) => b.count > 0).map((b) => ({ x: b.meanConfidence, y: b.successRate, count: b.count }));
  draw("reliability-chart", {
    type: "scatter",
    data: {
      datasets: [
        { label: "Perfect calibration", data: [{ x: 0, y: 0 }, { x: 1, y: 1 }], showLine: true,
          borderColor: "#9e9e9e", borderDash: [6, 4], pointRadius: 0, borderWidth: 1.5 },
        { label: "Observed", data: observed, showLine: true, borderColor: "#1565c0",
          backgroundColor: "#1565c0", pointRadius: observed.map((p) => 3 + Math.min(9, Math.sqrt(p.count))) },
      ],
    },
    options: {
      scales: {
        x: { min: 0, max: 1, title: { display: true, text: "mean confidence" } },
        y: { min: 0, max: 1, title: { display: true, text: "success rate" } },
      },
      plugins: {
        tooltip: { callbacks: { label: (c) => `confidence ${fixed(c.parsed.x)}, success ${fixed(c.parsed.y)} (${c.raw.count ?? ""} decisions)` } },
      },
    },
  });
}

function binRows(bins) {
  return bins.map((b) => el("tr", {},
    el("td", { class: "nowrap" }, `${fixed(b.from)}–${fixed(b.to)}`),
    el("td", { class: "num" }, b.count),
    el("td", { class: "num" }, fixed(b.meanConfidence)),
    el("td", { class: "num" }, fixed(b.successRate))));
}

function categoryRows(rows) {
  return rows.map((r) => el("tr", { "data-category": r.category ?? "" },
    el("td", {}, text(r.category)),
    el("td", { class: "num" }, r.decisions),
    el("td", { class: "num" }, fixed(r.brierScore, 3))));
}

async function calibrate() {
  const params = {};
  const filters = currentFilters();
  if (filters) params.filters = filters;
  const bins = numberOf(document.getElementById("bins"));
  if (bins !== undefined) params.bins = bins;
  const result = await call("cstp.getCalibration", params);
  const brier = document.getElementById("brier");
  brier.dataset.brier = result.brierScore === null ? "" : String(result.brierScore);
  brier.dataset.decisions = String(result.decisions);
  fill(brier, result.brierScore === null
    ? "No scored decisions: none with both a confidence and an outcome of success, partial or failure."
    : `Brier score ${fixed(result.brierScore, 3)} over ${result.decisions} scored decisions (0 is perfect; 0.25 is always saying 50%).`);
  reliability(result.bins);
  fill(document.querySelector("#bins-table tbody"), ...binRows(result.bins));
  fill(document.querySelector("#category-table tbody"), ...categoryRows(result.byCategory));
}

/** Every decision's date and outcome, in listDecisions pages; `complete` is false past MAX_PAGES. */
async function allSummaries() {
  const filters = currentFilters();
  const decisions = [];
  let cursor = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const params = { order: "dateAsc", limit: 100 };
    if (filters) params.filters = filters;
    if (cursor) params.cursor = cursor;
    const result = await call("cstp.listDecisions", params);
    decisions.push(...result.decisions);
    cursor = result.nextCursor;
    if (!cursor) return { decisions, complete: true };
  }
  return { decisions, complete: false };
}

/** Months from the first to the last dated decision ("2024-01"...), with counts by outcome. */
export function monthly(decisions) {
  const dated = decisions.filter((d) => d.date);
  const counts = new Map();
  if (dated.length) {
    const months = dated.map((d) => d.date.slice(0, 7)).sort();
    let [year, month] = months[0].split("-").map(Number);
    const last = months[months.length - 1];
    for (;;) {
      const key = `${year}-${String(month).padStart(2, "0")}`;
      counts.set(key, {});
      if (key >= last) break;
      month += 1;
      if (month > 12) { month = 1; year += 1; }
    }
  }
  for (const d of dated) {
    const outcome = d.outcome === null ? "none" : OUTCOMES.includes(d.outcome) ? d.outcome : "other";
    const bucket = counts.get(d.date.slice(0, 7));
    bucket[outcome] = (bucket[outcome] ?? 0) + 1;
  }
  return { counts, undated: decisions.length - dated.length };
}

async function months() {
  const status = document.getElementById("months-status");
  fill(status, "Counting…");
  const { decisions, complete } = await allSummaries();
  const { counts, undated } = monthly(decisions);
  const labels = [...counts.keys()];
  const keys = [...OUTCOMES, "other", "none"].filter((k) => labels.some((m) => counts.get(m)[k]));
  draw("months-chart", {
    type: "bar",
    data: {
      labels,
      datasets: keys.map((k) => ({
        label: k === "none" ? "no outcome" : k, data: labels.map((m) => counts.get(m)[k] ?? 0),
        backgroundColor: COLOURS[k],
      })),
    },
    options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } },
  });
  status.dataset.undated = String(undated);
  status.dataset.counted = String(decisions.length);
  fill(status, `${decisions.length} decisions counted` + (undated ? `, ${undated} undated (not shown)` : "")
    + (complete ? "." : `; only the first ${MAX_PAGES * 100} were read.`));
}

async function refresh(event) {
  event?.preventDefault();
  delete document.getElementById("brier").dataset.decisions;
  delete document.getElementById("months-status").dataset.counted;
  if (!window.Chart) {
    showError({ code: 0, message: "The chart library did not load.", data: null, retryAfter: null });
    return;
  }
  try {
    await calibrate();
    await months();
    clearError();
  } catch (error) {
    showError(error);
  }
}

/** Wire the calibration form. */
export function setupCalibration() {
  document.getElementById("calibration-form").addEventListener("submit", refresh);
}

/** Compute once, the first time the view is shown. */
export function showCalibration() {
  if (!charts["reliability-chart"]) refresh();
}
