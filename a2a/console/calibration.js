// Calibration: the reliability diagram with each bin's Wilson interval as an error bar, the Brier
// score, its Murphy decomposition, per-category and per-agent tables and the Brier score per month
// (cstp.getCalibration); decisions per month by outcome (cstp.getStats). Charts: Chart.js (vendored).

import { call } from "./api.js";
import { el, fill, fixed, text } from "./dom.js";
import { clearError, showError } from "./errors.js";
import { currentFilters, numberOf } from "./filters.js";
import { stats as getStats } from "./stats.js";
import { withTenant } from "./tenant.js";

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

/** Draws each observed point's [low, high] as a vertical bar with caps (Chart.js has no error bars). */
const errorBars = {
  id: "errorBars",
  afterDatasetsDraw(chart) {
    const dataset = chart.data.datasets.find((d) => d.errorBars);
    if (!dataset) return;
    const { ctx, scales: { x, y } } = chart;
    ctx.save();
    ctx.strokeStyle = dataset.borderColor;
    ctx.lineWidth = 1.5;
    for (const p of dataset.data) {
      const px = x.getPixelForValue(p.x);
      const [top, bottom] = [y.getPixelForValue(p.high), y.getPixelForValue(p.low)];
      ctx.beginPath();
      ctx.moveTo(px, top); ctx.lineTo(px, bottom);
      ctx.moveTo(px - 4, top); ctx.lineTo(px + 4, top);
      ctx.moveTo(px - 4, bottom); ctx.lineTo(px + 4, bottom);
      ctx.stroke();
    }
    ctx.restore();
  },
};

function reliability(bins) {
  const observed = bins.filter((b) => b.count > 0).map((b) => ({
    x: b.meanConfidence, y: b.successRate, count: b.count, low: b.successRateLow, high: b.successRateHigh,
  }));
  draw("reliability-chart", {
    plugins: [errorBars],
    type: "scatter",
    data: {
      datasets: [
        { label: "Perfect calibration", data: [{ x: 0, y: 0 }, { x: 1, y: 1 }], showLine: true,
          borderColor: "#9e9e9e", borderDash: [6, 4], pointRadius: 0, borderWidth: 1.5 },
        { label: "Observed", data: observed, showLine: true, borderColor: "#1565c0", errorBars: true,
          backgroundColor: "#1565c0", pointRadius: observed.map((p) => 3 + Math.min(9, Math.sqrt(p.count))) },
      ],
    },
    options: {
      scales: {
        x: { min: 0, max: 1, title: { display: true, text: "mean confidence" } },
        y: { min: 0, max: 1, title: { display: true, text: "success rate" } },
      },
      plugins: {
        tooltip: { callbacks: { label: (c) => `confidence ${fixed(c.parsed.x)}, success ${fixed(c.parsed.y)} [${fixed(c.raw.low)}, ${fixed(c.raw.high)}] (${c.raw.count ?? ""} decisions)` } },
      },
    },
  });
}

function binRows(bins) {
  return bins.map((b) => el("tr", {},
    el("td", { class: "nowrap" }, `${fixed(b.from)}–${fixed(b.to)}`),
    el("td", { class: "num" }, b.count),
    el("td", { class: "num" }, fixed(b.meanConfidence)),
    el("td", { class: "num" }, fixed(b.successRate)),
    el("td", { class: "num nowrap", "data-low": b.successRateLow ?? "", "data-high": b.successRateHigh ?? "" },
      b.count ? `${fixed(b.successRateLow)}–${fixed(b.successRateHigh)}` : "")));
}

function agentRows(rows) {
  return rows.map((r) => el("tr", { "data-agent": r.agent ?? "" },
    el("td", {}, text(r.agent)),
    el("td", { class: "num" }, r.decisions),
    el("td", { class: "num" }, fixed(r.brierScore, 3))));
}

/** The top of the Brier axis: the largest score plus 15%, rounded up to a step of 0.05, at
 * least 0.1 and at most 1 (a fixed 0-1 axis flattened scores of 0-0.2 into one line). */
export function brierAxisMax(scores) {
  const top = Math.max(0, ...scores.filter((s) => typeof s === "number"));
  const padded = Math.ceil(Math.round(top * 1.15 * 1e6) / 1e6 / 0.05) * 0.05;
  return Math.min(1, Math.max(0.1, Math.round(padded * 100) / 100));
}

function brierOverTime(byMonth) {
  const scores = byMonth.map((m) => m.brierScore);
  draw("brier-chart", {
    type: "line",
    data: {
      labels: byMonth.map((m) => m.month),
      datasets: [{ label: "Brier score", data: scores, borderColor: "#c62828",
        backgroundColor: "#c62828", pointRadius: 3 }],
    },
    options: { scales: { y: { min: 0, max: brierAxisMax(scores), title: { display: true, text: "Brier score" } } } },
  });
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
  // "All tenants" is "*": getCalibration aggregates every granted tenant.
  const result = await call("cstp.getCalibration", withTenant(params));
  const brier = document.getElementById("brier");
  brier.dataset.brier = result.brierScore === null ? "" : String(result.brierScore);
  brier.dataset.decisions = String(result.decisions);
  fill(brier, result.brierScore === null
    ? "No scored decisions: none with both a confidence and an outcome of success, partial or failure."
    : `Brier score ${fixed(result.brierScore, 3)} over ${result.decisions} scored decisions (0 is perfect; 0.25 is always saying 50%).`);
  reliability(result.bins);
  fill(document.querySelector("#bins-table tbody"), ...binRows(result.bins));
  fill(document.querySelector("#category-table tbody"), ...categoryRows(result.byCategory));
  fill(document.querySelector("#agent-table tbody"), ...agentRows(result.byAgent));
  fill(document.getElementById("murphy"), result.brierScoreBinned === null ? ""
    : `Binned Brier ${fixed(result.brierScoreBinned, 3)} = reliability ${fixed(result.reliability, 3)}`
      + ` − resolution ${fixed(result.resolution, 3)} + uncertainty ${fixed(result.uncertainty, 3)}.`);
  brierOverTime(result.byMonth);
}

/** Months from the first to the last in `byMonth` (cstp.getStats), gaps filled, counts by outcome. */
export function monthly(byMonth) {
  const counts = new Map();
  if (byMonth.length) {
    let [year, month] = byMonth[0].month.split("-").map(Number);
    const last = byMonth[byMonth.length - 1].month;
    for (;;) {
      const key = `${year}-${String(month).padStart(2, "0")}`;
      counts.set(key, {});
      if (key >= last) break;
      month += 1;
      if (month > 12) { month = 1; year += 1; }
    }
  }
  for (const m of byMonth) {
    const bucket = counts.get(m.month);
    for (const [outcome, n] of Object.entries(m.outcomes)) {
      const key = outcome === "none" || OUTCOMES.includes(outcome) ? outcome : "other";
      bucket[key] = (bucket[key] ?? 0) + n;
    }
  }
  return counts;
}

async function months() {
  const status = document.getElementById("months-status");
  fill(status, "Counting…");
  const filters = currentFilters();
  const stats = await getStats(filters ? { filters } : {});
  const counts = monthly(stats.byMonth);
  const undated = stats.undated;
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
  status.dataset.counted = String(stats.decisions);
  fill(status, `${stats.decisions} decisions counted` + (undated ? `, ${undated} undated (not shown).` : "."));
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
