// Small DOM and formatting helpers. Text from the store is always set as text, never as HTML.

/** A new element: `attrs` set as attributes (`class`, `data-*`, `aria-*`), children appended as nodes or text. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** "2024-01-18" from an RFC 3339 date, "undated" for null. */
export function day(date) {
  return date ? date.slice(0, 10) : "undated";
}

/** A number with `digits` decimals, "—" for null. */
export function fixed(value, digits = 2) {
  return value === null || value === undefined ? "—" : Number(value).toFixed(digits);
}

/** A field that may be null, as text. */
export function text(value) {
  return value === null || value === undefined || value === "" ? "—" : String(value);
}

/** Replace the children of `node`. */
export function fill(node, ...children) {
  node.replaceChildren(...children.filter((c) => c !== null && c !== undefined));
}
