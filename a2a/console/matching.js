// When a result list is a match: the threshold and words of `cstp query` (a2a.query.matching),
// read from /console/matching.json so the page and the CLI never disagree.

let loaded = null;

/** `{broadMatchDistance, broadMatch, noMatch}`, fetched once per page. */
export function matching() {
  loaded ??= fetch("console/matching.json", { cache: "no-store", credentials: "omit" }).then((r) => {
    if (!r.ok) throw new Error(`matching.json: HTTP ${r.status}`);
    return r.json();
  });
  return loaded;
}

/**
 * The note above a result list, as a2a.client.precedents.match_note decides it:
 * `{kind: "none", text}` when no decision is within `maxDistance` (or none came back),
 * `{kind: "broad", text}` when the closest distance is past the threshold, else null.
 */
export function matchNote(decisions, maxDistance, config) {
  const kept = maxDistance === undefined || typeof maxDistance !== "number"
    ? decisions
    : decisions.filter((d) => d.distance === null || d.distance <= maxDistance);
  if (!kept.length) return { kind: "none", text: config.noMatch };
  const distances = kept.map((d) => d.distance).filter((d) => d !== null && d !== undefined);
  if (distances.length && Math.min(...distances) > config.broadMatchDistance) {
    return { kind: "broad", text: config.broadMatch };
  }
  return null;
}

/**
 * How a distance is drawn: `closeness` in [0, 1] is 1 at distance 0 and 0 at the threshold
 * (the bar's length); `weak` past the threshold, where the bar is a short stub in the
 * warning colour.
 */
export function distanceShape(distance, threshold) {
  if (distance === null || distance === undefined) return { closeness: 0, weak: false };
  const weak = distance > threshold;
  const closeness = weak ? 0 : Math.max(0, Math.min(1, 1 - distance / threshold));
  return { closeness, weak };
}
