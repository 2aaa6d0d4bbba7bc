// Peer services (CONTRACT.md, Federation): the ones cstp.listPeers names, the "include peers"
// choice of the search (`peers: "*"`), and each peer's state: as listed (reachable, circuit)
// until a search asked them, then as that answer's `peers` block says (successful, failed
// or skipped, with the reason).

import { call } from "./api.js";
import { el, fill } from "./dom.js";

// [{name, reachable, circuit, embeddingModel, sameModel}] from the last cstp.listPeers; []
// when it failed (no token yet, a service without the method) or the service has none.
let listed = [];

const choice = () => document.getElementById("peers");
const states = () => document.getElementById("peer-status");

/** Whether the next search asks the peers: the box is shown (peers listed) and ticked. */
export function includePeers() {
  return listed.length > 0 && choice().checked;
}

/** `params` with `peers: "*"` (every configured peer) when the search includes them. */
export function withPeers(params) {
  return includePeers() ? { ...params, peers: "*" } : params;
}

function modelText(peer) {
  const model = peer.embeddingModel;
  if (!model) return "model unknown (merged by rank)";
  const same = peer.sameModel ? "same model as this service" : "another model (merged by rank)";
  return `${model.name}, ${same}`;
}

/** One peer as cstp.listPeers lists it: `reachable`, `unreachable` or circuit `open`. */
function listedItem(peer) {
  const state = peer.circuit === "open" ? "open" : peer.reachable ? "reachable" : "unreachable";
  const words = {
    reachable: "reachable",
    unreachable: "not reachable now",
    open: "circuit open: skipped for a while after failing",
  }[state];
  return peerItem(peer.name, state, `${words} · ${modelText(peer)}`);
}

/** One peer of an answer's `peers` block: successful (its decisions and time), failed (the
 * reason and code) or skipped (its circuit open). */
function answerItem(detail) {
  let words;
  if (detail.status === "successful") {
    words = `answered: ${detail.decisions} decision${detail.decisions === 1 ? "" : "s"} in ${detail.tookMs} ms`;
    if (detail.stale) words += ` (stale, as of ${detail.stale.since})`;
  } else if (detail.status === "failed") {
    const error = detail.error;
    words = error ? `failed: ${error.message} (error ${error.code})` : "failed";
  } else {
    words = "skipped: its circuit is open after failing calls; it is tried again shortly";
  }
  return peerItem(detail.peer, detail.status, words);
}

function peerItem(name, status, words) {
  return el(
    "li",
    { class: "peer", "data-peer": name, "data-status": status },
    el("span", { class: "peer-name" }, name),
    " ",
    el("span", { class: "peer-state" }, words),
  );
}

// The listed states show while "Include peers" is ticked (what the next search would ask):
// unticked, they would push the results down on a phone for peers nobody asked.
function showStates(items, source, partial = false) {
  fill(states(), ...items);
  states().hidden = items.length === 0 || (source === "listed" && !choice().checked);
  states().dataset.source = source;
  if (partial) states().dataset.partial = "true";
  else delete states().dataset.partial;
}

/** After a search: each peer's part in `result` (its `peers` block), or the listed states
 * again when the search asked none. Returns a short summary for the status line ("" when
 * no peer was asked): how many answered and how the lists were merged. */
export function showAnswerPeers(result) {
  const block = result.peers;
  if (!block) {
    showStates(listed.map(listedItem), "listed");
    return "";
  }
  showStates(block.details.map(answerItem), "answer", result.partial === true);
  const merge = result.merge ? `, merged by ${result.merge}` : "";
  return `peers: ${block.successful} of ${block.total} answered${merge}`;
}

/** Read the peers from cstp.listPeers: the "Include peers" box shows only when there are
 * some, and each one's state is listed under the search form while it is ticked. */
export async function loadPeers() {
  try {
    listed = (await call("cstp.listPeers", {})).peers;
  } catch {
    listed = [];
  }
  document.getElementById("peers-field").hidden = listed.length === 0;
  if (!listed.length) choice().checked = false;
  choice().dataset.listed = String(listed.length);
  choice().onchange = () => {
    if (states().dataset.source === "listed") showStates(listed.map(listedItem), "listed");
  };
  showStates(listed.map(listedItem), "listed");
}
