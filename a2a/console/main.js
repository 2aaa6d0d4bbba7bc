// The console's entry point: the token, the tenant, the peers, the three views, and the shared filters.

import { setToken, token } from "./api.js";
import { setupBrowse, showBrowse } from "./browse.js";
import { setupCalibration, showCalibration } from "./calibration.js";
import { setupCheck } from "./check.js";
import { setupDecision } from "./decision.js";
import { fill } from "./dom.js";
import { clearError } from "./errors.js";
import { showFilterCount } from "./filters.js";
import { searchesStarted, setupSearch } from "./search.js";
import { loadPeers } from "./peers.js";
import { refreshValues } from "./store-values.js";
import { loadTenants, setupTenants } from "./tenant.js";

const VIEWS = { search: null, browse: showBrowse, calibration: showCalibration, check: null };
const ACTIONS = {
  search: "search-form", browse: "browse-form", calibration: "calibration-form", check: "check-form",
};
let currentView = "search";

// What the service last made of this tab's token ("accepted", "refused"), null until it answers.
let verdict = null;

const TOKEN_STATES = {
  "set:null": "token set, not yet used",
  "set:accepted": "token accepted",
  "set:refused": "token refused by the service",
  "none:null": "no token",
  "none:accepted": "no token (the service has auth off)",
  "none:refused": "no token: the service needs one",
};

/** The header's token state, truthful: data-state is `<set|none>:<accepted|refused|null>`. */
function showTokenState() {
  const state = `${token() ? "set" : "none"}:${verdict}`;
  const node = document.getElementById("token-state");
  node.dataset.state = state;
  fill(node, TOKEN_STATES[state]);
}

/** Re-run the view on screen (an empty search is left alone, and so is one started since
 * `searchesBefore`: it already went out with the new token) and re-read the filter values:
 * after a new token or another tenant. */
function rerun(searchesBefore = searchesStarted()) {
  refreshValues();
  if (currentView === "search" && searchesStarted() !== searchesBefore) return;
  if (currentView === "check") {
    if (document.getElementById("check-title").value.trim()) {
      document.getElementById("check-form").requestSubmit();
    }
    return;
  }
  if (currentView !== "search" || document.getElementById("q").value.trim()) {
    document.getElementById(ACTIONS[currentView]).requestSubmit();
  }
}

function setupToken() {
  const input = document.getElementById("token");
  document.getElementById("token-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    setToken(input.value.trim());
    input.value = "";
    verdict = null;
    clearError();
    showTokenState();
    // The token's tenants and peers first: every call after names one of them.
    const searches = searchesStarted();
    await Promise.all([loadTenants(), loadPeers()]);
    rerun(searches);
  });
  document.getElementById("token-forget").addEventListener("click", () => {
    setToken("");
    input.value = "";
    verdict = null;
    showTokenState();
    // The tenants and peers were the forgotten token's: none (or, with auth off, every one) now.
    loadTenants();
    loadPeers();
  });
  document.addEventListener("cstp-token", (event) => {
    // A late answer about a token since replaced or forgotten says nothing about this one.
    if (event.detail.token !== token()) return;
    verdict = event.detail.verdict;
    showTokenState();
  });
  showTokenState();
}

function show(view) {
  currentView = view;
  for (const name of Object.keys(VIEWS)) {
    document.getElementById(`view-${name}`).hidden = name !== view;
    const button = document.getElementById(`nav-${name}`);
    if (name === view) button.setAttribute("aria-current", "page");
    else button.removeAttribute("aria-current");
  }
  // One filters panel for every view, below the form of the one on screen: that form first.
  // A check takes no filters: the panel is hidden there.
  const panel = document.getElementById("filters-panel");
  document.getElementById(ACTIONS[view]).after(panel);
  panel.hidden = view === "check";
  VIEWS[view]?.();
}

function setupViews() {
  for (const button of document.querySelectorAll(".view-button")) {
    button.addEventListener("click", () => show(button.dataset.view));
  }
  const filters = document.getElementById("filters");
  filters.addEventListener("input", showFilterCount);
  filters.addEventListener("change", showFilterCount);
  // After the reset has cleared the inputs.
  filters.addEventListener("reset", () => setTimeout(showFilterCount));
  showFilterCount();
  // Enter in a filter runs the view on screen with the new filters.
  document.getElementById("filters").addEventListener("submit", (event) => {
    event.preventDefault();
    document.getElementById(ACTIONS[currentView]).requestSubmit();
  });
}

setupToken();
setupViews();
setupDecision();
setupSearch();
setupBrowse();
setupCalibration();
setupCheck();
setupTenants(() => {
  clearError();
  rerun();
});
loadTenants().then(refreshValues);
loadPeers();
