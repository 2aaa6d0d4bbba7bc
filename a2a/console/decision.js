// One whole decision (cstp.getDecision) in a modal dialog; Escape or Close returns focus to the opener.

import { call } from "./api.js";
import { el, fill, fixed, text } from "./dom.js";
import { clearError, showError } from "./errors.js";
import { ownTenant, withTenant } from "./tenant.js";

const dialog = () => document.getElementById("decision");
let opener = null;

function field(name, value) {
  return [el("dt", {}, name), el("dd", {}, text(value))];
}

function block(title, ...children) {
  return el("section", { class: "block" }, el("h3", {}, title), ...children);
}

function paragraphs(value) {
  return value ? el("p", { class: "prose" }, value) : el("p", { class: "help" }, "not recorded");
}

function render(record) {
  fill(document.getElementById("decision-title"), record.title ?? record.id);
  fill(
    document.getElementById("decision-fields"),
    ...field("Id", record.id),
    ...(record.peer ? field("Peer service", record.peer) : []),
    ...field("Tenant", record.tenant),
    ...field("Date", record.date ? record.date.replace("T", " ").replace("Z", " UTC") : null),
    ...field("Category", record.category),
    ...field("Confidence", record.confidence === null ? null : fixed(record.confidence)),
    ...field("Stakes", record.stakes),
    ...field("Status", record.status),
    ...field("Outcome", record.outcome),
    ...field("Source", record.source),
    ...field("Recorded by", record.recordedBy),
    ...field("Recorded at", record.recordedAt),
    ...field("Reviewed at", record.reviewedAt),
  );
  const reasons = Array.isArray(record.reasons) && record.reasons.length
    ? el("ul", { class: "reasons" }, ...record.reasons.map((r) => el("li", {}, el("span", { class: "tag" }, r.type), " ", r.text ?? "")))
    : el("p", { class: "help" }, "none recorded");
  const tags = Array.isArray(record.tags) && record.tags.length
    ? el("p", { class: "tags" }, ...record.tags.map((t) => el("span", { class: "tag" }, t)))
    : el("p", { class: "help" }, "none");
  fill(
    document.getElementById("decision-body"),
    block("Context", paragraphs(record.context)),
    block("Decision", paragraphs(record.decision)),
    block("Reasons", reasons),
    block("Tags", tags),
    block("Lessons", paragraphs(record.lessons)),
  );
  dialog().dataset.id = record.id;
  if (record.tenant) dialog().dataset.tenant = record.tenant;
  else delete dialog().dataset.tenant;
  if (record.peer) dialog().dataset.peer = record.peer;
  else delete dialog().dataset.peer;
}

/** Fetch decision `id` of `tenant` (default: the chosen one; a result names its own) and
 * show it; `from` gets the focus back when the dialog closes. A decision of peer service
 * `peer` is read from that peer (`peer` on the call): its tenant is the peer's, so the call
 * names one of ours (CONTRACT.md, Federation: whole records). */
export async function openDecision(id, from = null, tenant = undefined, peer = null) {
  opener = from;
  const params = peer ? withTenant({ id, peer }, ownTenant()) : withTenant({ id }, tenant ?? undefined);
  try {
    const record = await call("cstp.getDecision", params);
    clearError();
    render(record);
    if (!dialog().open) dialog().showModal();
    document.getElementById("decision-close").focus();
  } catch (error) {
    showError(error);
  }
}

/** Wire the dialog's Close button and focus return. */
export function setupDecision() {
  document.getElementById("decision-close").addEventListener("click", () => dialog().close());
  dialog().addEventListener("close", () => {
    if (opener && document.contains(opener)) opener.focus();
    opener = null;
  });
  // A click on the backdrop closes it too. The backdrop's clicks target the dialog itself, and
  // so do clicks on its padding: only one outside the dialog's box is on the backdrop.
  dialog().addEventListener("click", (event) => {
    if (event.target !== dialog()) return;
    const box = dialog().getBoundingClientRect();
    const inside = event.clientX >= box.left && event.clientX <= box.right
      && event.clientY >= box.top && event.clientY <= box.bottom;
    if (!inside) dialog().close();
  });
}
