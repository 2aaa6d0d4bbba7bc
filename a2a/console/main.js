// The console's entry point: the token, the three views, and the shared filters.

import { setToken, token } from "./api.js";
import { setupBrowse, showBrowse } from "./browse.js";
import { setupCalibration, showCalibration } from "./calibration.js";
import { setupDecision } from "./decision.js";
import { fill } from "./dom.js";
import { clearError } from "./errors.js";
import { setupSearch } from "./search.js";

const VIEWS = { search: null, browse: showBrowse, calibration: showCalibration };
const ACTIONS = { search: "search-form", browse: "browse-form", calibration: "calibration-form" };
let currentView = "search";

function showTokenState() {
  fill(document.getElementById("token-state"), token() ? "token set for this tab" : "no token");
}

function setupToken() {
  const input = document.getElementById("token");
  document.getElementById("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    setToken(input.value.trim());
    input.value = "";
    clearError();
    showTokenState();
    // Re-run what the token was pasted for; an empty search is left alone.
    if (currentView !== "search" || document.getElementById("q").value.trim()) {
      document.getElementById(ACTIONS[currentView]).requestSubmit();
    }
  });
  document.getElementById("token-forget").addEventListener("click", () => {
    setToken("");
    input.value = "";
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
  VIEWS[view]?.();
}

function setupViews() {
  for (const button of document.querySelectorAll(".view-button")) {
    button.addEventListener("click", () => show(button.dataset.view));
  }
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
