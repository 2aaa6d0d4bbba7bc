// Check a proposal: cstp.checkGuardrails with the form's proposal, in the chosen tenant. Shows
// the verdict, each violated rule with its message, the precedents with their outcomes and the
// caller's calibration. A check writes nothing (CONTRACT.md, Guardrails).

import { call } from "./api.js";
import { openDecision } from "./decision.js";
import { day, el, fill, fixed, text } from "./dom.js";
import { clearError, showError } from "./errors.js";
import { numberOf } from "./filters.js";
import { EVERY, chosenTenant, withTenant } from "./tenant.js";

const VERDICTS = {
  allow: "Allow: no rule objects.",
  warn: "Warn: go ahead, but heed the rules below.",
  block: "Block: do not act as proposed.",
};

/** The params of the check form, as sent on the wire; fields left empty are not sent. */
export function checkParams() {
  const f = document.getElementById("check-form").elements;
  const proposal = { title: f.title.value };
  for (const name of ["category", "stakes", "context"]) {
    if (f[name].value.trim()) proposal[name] = f[name].value.trim();
  }
  const confidence = numberOf(f.confidence);
  if (confidence !== undefined) proposal.confidence = confidence;
  const tags = f.tags.value.split(",").map((t) => t.trim()).filter(Boolean);
  if (tags.length) proposal.tags = tags;
  return withTenant({ proposal });
}

function violationItem(v) {
  return el(
    "li",
    { class: `violation ${v.severity}`, "data-rule": v.rule, "data-severity": v.severity },
    el("strong", {}, `${v.severity} · ${v.rule}`),
    el("span", { class: "violation-message" }, v.message),
  );
}

function precedentItem(p) {
  const meta = [day(p.date), text(p.category), `outcome ${text(p.outcome)}`,
    `distance ${fixed(p.distance, 3)}`, `confidence ${fixed(p.confidence)}`];
  const button = el(
    "button",
    { type: "button", class: "result", "data-id": p.id, "data-outcome": p.outcome },
    el("span", { class: "result-title" }, text(p.title)),
    el("span", { class: "result-id" }, p.id),
    el("span", { class: "result-meta" }, meta.join(" · ")),
  );
  button.addEventListener("click", () => openDecision(p.id, button, p.tenant ?? undefined));
  return el("li", {}, button);
}

function showResult(result) {
  const verdict = document.getElementById("check-verdict");
  verdict.dataset.verdict = result.verdict;
  verdict.className = `verdict ${result.verdict}`;
  fill(verdict, `${VERDICTS[result.verdict]} (${result.evaluated} rule(s) evaluated)`);
  fill(document.getElementById("check-violations"), ...result.violations.map(violationItem));
  fill(document.getElementById("check-precedents"), ...result.precedents.map(precedentItem));
  document.getElementById("check-precedents-heading").hidden = result.precedents.length === 0;
  const c = result.calibration;
  fill(document.getElementById("check-calibration"), c.decisions
    ? `Your calibration in ${c.category ?? "every category"}: Brier ${fixed(c.brierScore, 3)} over ${c.decisions} scored decision(s).`
    : `No scored decision of yours in ${c.category ?? "any category"} yet.`);
}

export function setupCheck() {
  document.getElementById("check-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    clearError();
    if (chosenTenant() === EVERY) {
      const verdict = document.getElementById("check-verdict");
      verdict.dataset.verdict = "";
      fill(verdict, "Choose one tenant: a proposal is checked against one tenant's rules and record.");
      return;
    }
    try {
      showResult(await call("cstp.checkGuardrails", checkParams()));
    } catch (error) {
      showError(error);
    }
  });
}
