// When a result list is a match: the service's `broadMatch` field, and the line and words of
// `cstp query` (a2a.app.console), read from /console/matching.json so the page and the CLI
// never disagree.

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
 * The note above a queryDecisions result, as `cstp query` prints it
 * (a2a.client.precedents.result_note): `{kind: "none", text}` when it holds no decision,
 * `{kind: "broad", text}` when the service marked it `broadMatch`, else null. The page
 * judges nothing itself: the service's one rule set the field.
 */
export function matchNote(result, config) {
  if (!result.decisions.length) return { kind: "none", text: config.noMatch };
  if (result.broadMatch) return { kind: "broad", text: config.broadMatch };
  return null;
}

/**
 * How a distance is drawn: `closeness` in [0, 1] is 1 at distance 0 and 0 at the
 * broad-match line `threshold` (the bar's length); `weak` past it, where the bar is a short
 * stub in the warning colour. Without a line (null: the model has none) the bar spans the
 * whole range of cosine distance, 0 to 2, and no hit is weak.
 */
export function distanceShape(distance, threshold) {
  if (distance === null || distance === undefined) return { closeness: 0, weak: false };
  const line = threshold ?? 2;
  const weak = threshold !== null && threshold !== undefined && distance > threshold;
  const closeness = weak ? 0 : Math.max(0, Math.min(1, 1 - distance / line));
  return { closeness, weak };
}
