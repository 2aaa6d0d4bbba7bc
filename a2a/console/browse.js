// Browse: cstp.listDecisions, one page at a time. Next pushes the service's opaque cursor on a
// stack; Previous pops it, so every page is asked for again with the cursor that first gave it.

import { call } from "./api.js";
import { openDecision } from "./decision.js";
import { day, el, fill, fixed, text } from "./dom.js";
import { clearError, showError } from "./errors.js";
import { currentFilters, numberOf } from "./filters.js";
import { EVERY, chosenTenant, withTenant } from "./tenant.js";

// cursors[i] is the cursor that gives page i (null for the first); next is the current page's nextCursor.
let cursors = [null];
let next = null;
// Successful loads so far, on the table as data-loads: a page that shows one can be waited on.
let loads = 0;

function params(cursor) {
  const f = document.getElementById("browse-form").elements;
  const result = withTenant({ order: f.order.value });
  const filters = currentFilters();
  if (filters) result.filters = filters;
  const limit = numberOf(f.limit);
  if (limit !== undefined) result.limit = limit;
  if (cursor) result.cursor = cursor;
  return result;
}

function row(decision) {
  const tenant = decision.tenant ?? null;
  const open = el("button", { type: "button", class: "link", "data-id": decision.id }, text(decision.title));
  open.addEventListener("click", () => openDecision(decision.id, open, tenant));
  return el(
    "tr",
    { "data-id": decision.id, "data-tenant": tenant },
    el("td", { class: "nowrap" }, day(decision.date)),
    el("td", {}, open, el("span", { class: "result-id" }, decision.id)),
    el("td", {}, text(decision.category)),
    el("td", { class: "num" }, fixed(decision.confidence)),
    el("td", {}, text(decision.stakes)),
    el("td", {}, text(decision.status)),
    el("td", {}, text(decision.outcome)),
    el("td", {}, text(decision.recordedBy)),
    el("td", {}, text(tenant)),
  );
}

/** Whether the table is wider than its box (a narrow screen): then the hint above it shows,
 * and the box's right edge is shaded (`data-more="right"`) until scrolled to the end. */
function showScrollHint() {
  const wrap = document.getElementById("browse-wrap");
  const hidden = wrap.scrollWidth - wrap.clientWidth;
  document.getElementById("browse-scroll-hint").hidden = hidden <= 1;
  wrap.dataset.more = hidden > 1 && wrap.scrollLeft < hidden - 1 ? "right" : "";
}

/** No rows, no pager; `note` (if any) where the page number goes. */
function clear(note = null) {
  fill(document.getElementById("browse-rows"));
  const label = document.getElementById("browse-page");
  fill(label, note);
  delete label.dataset.page;
  if (note) label.dataset.note = "pick-tenant";
  else delete label.dataset.note;
  document.getElementById("browse-prev").disabled = true;
  document.getElementById("browse-next").disabled = true;
  showScrollHint();
}

async function load(stack) {
  const page = stack.length - 1;
  if (chosenTenant() === EVERY) {
    // listDecisions pages one tenant (its cursor is bound to it): there is no "*" here.
    clearError();
    clear("Browse lists one tenant at a time: pick one in Tenant above.");
    return;
  }
  try {
    const result = await call("cstp.listDecisions", params(stack[page]));
    clearError();
    cursors = stack;
    next = result.nextCursor;
    fill(document.getElementById("browse-rows"), ...result.decisions.map(row));
    loads += 1;
    document.getElementById("browse-table").dataset.loads = String(loads);
    const label = document.getElementById("browse-page");
    delete label.dataset.note;
    label.dataset.page = String(page + 1);
    fill(label, `Page ${page + 1} · ${result.decisions.length} decisions`);
    document.getElementById("browse-prev").disabled = page === 0;
    document.getElementById("browse-next").disabled = !next;
    showScrollHint();
  } catch (error) {
    // No stale page under an error: the rows and the pager go with it.
    clear();
    showError(error);
  }
}

/** Wire the browse form and the pager. */
export function setupBrowse() {
  document.getElementById("browse-form").addEventListener("submit", (event) => {
    event.preventDefault();
    load([null]);
  });
  document.getElementById("browse-next").addEventListener("click", () => {
    if (next) load([...cursors, next]);
  });
  document.getElementById("browse-prev").addEventListener("click", () => {
    if (cursors.length > 1) load(cursors.slice(0, -1));
  });
  document.getElementById("browse-wrap").addEventListener("scroll", showScrollHint, { passive: true });
  window.addEventListener("resize", showScrollHint);
}

/** Load the first page unless a page is already shown. */
export function showBrowse() {
  if (!document.getElementById("browse-rows").children.length) load([null]);
  else showScrollHint();
}
