// The filters form, shared by every view, as the wire's `filters` object (CONTRACT.md, queryDecisions params).

const form = () => document.getElementById("filters");

function number(input) {
  const raw = input.value.trim();
  // Sent as typed when it is not a number, so the service names the bad field (-32602).
  return raw === "" ? undefined : Number.isFinite(Number(raw)) ? Number(raw) : raw;
}

function checked(name) {
  return [...form().querySelectorAll(`input[name="${name}"]:checked`)].map((box) => box.value);
}

/** The filters as sent on the wire, or null when none is set. */
export function currentFilters() {
  const f = form().elements;
  const filters = {};
  const category = f.category.value.trim();
  if (category) filters.category = category;
  const min = number(f.minConfidence);
  if (min !== undefined) filters.minConfidence = min;
  const max = number(f.maxConfidence);
  if (max !== undefined) filters.maxConfidence = max;
  if (f.dateAfter.value) filters.dateAfter = f.dateAfter.value;
  if (f.dateBefore.value) filters.dateBefore = f.dateBefore.value;
  const stakes = checked("stakes");
  if (stakes.length) filters.stakes = stakes;
  const status = checked("status");
  if (status.length) filters.status = status;
  return Object.keys(filters).length ? filters : null;
}

/** `value` of a number input, or undefined when empty (the service's default applies). */
export function numberOf(input) {
  return number(input);
}

/** Mark the inputs whose `data-field` the service named in a -32602 (`aria-invalid`); clear the rest. */
export function markInvalid(fields) {
  for (const node of document.querySelectorAll("[data-field]")) {
    if (fields.includes(node.dataset.field)) node.setAttribute("aria-invalid", "true");
    else node.removeAttribute("aria-invalid");
  }
}

/** On a narrow screen (the console's one-column layout), close the filters panel so the
 * results come first; its summary still says how many filters are set. */
export function collapseFiltersWhenNarrow() {
  if (window.matchMedia("(max-width: 720px)").matches) document.getElementById("filters-panel").open = false;
}

/** Write the number of filters set into the panel's summary (`data-set` too). */
export function showFilterCount() {
  const filters = currentFilters();
  const n = filters ? Object.keys(filters).length : 0;
  const node = document.getElementById("filters-count");
  node.dataset.set = String(n);
  node.textContent = n ? `${n} set` : "none set";
}
