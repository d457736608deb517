// Where the live overlay (./overlay.ts) draws a screen pixel: pure arithmetic on boxes, so every
// view mode is the same rule. Fit and Resize scale the canvas's box, 1:1 scrolls it (its box then
// starts left of or above the view); either way the box is where noVNC draws the whole screen.

/** A box in CSS pixels (a DOMRect's fields). */
export interface Box {
  readonly left: number;
  readonly top: number;
  readonly width: number;
  readonly height: number;
}

/** The screen's size in its own pixels (the canvas's width and height). */
export interface Size {
  readonly width: number;
  readonly height: number;
}

export interface Point {
  readonly x: number;
  readonly y: number;
}

/** Where the centre of screen pixel `p` is drawn, in the coordinates `canvas` is given in. */
export function viewPoint(p: Point, screen: Size, canvas: Box): Point {
  return {
    x: canvas.left + ((p.x + 0.5) * canvas.width) / screen.width,
    y: canvas.top + ((p.y + 0.5) * canvas.height) / screen.height,
  };
}

/** The centre of screen pixel `p` as percentages of the drawn screen's box (the overlay's board). */
export function boardPercent(p: Point, screen: Size): Point {
  return { x: ((p.x + 0.5) * 100) / screen.width, y: ((p.y + 0.5) * 100) / screen.height };
}

/** `inner` placed relative to `outer` (both in the same coordinates), its size kept. */
export function relativeBox(inner: Box, outer: Box): Box {
  return { left: inner.left - outer.left, top: inner.top - outer.top, width: inner.width, height: inner.height };
}
