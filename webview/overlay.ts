// The live action overlay: what the agent does, drawn over the screen as it happens — a ghost
// pointer that moves to the target, a ripple on a click (the mouse glyph shows which button, two
// rings a double click), a drag's path, a scroll's arrow, and the action's words for a moment
// ("Typing 42 characters", "Pressing Ctrl+L"). It is plain DOM over the canvas: pointer-events
// none, hidden from assistive technology (a rate-limited line goes to the live region instead),
// and it holds no reference to the RFB session, so it can never send a byte to the screen.
// Marks are placed in percent of a board that is kept on the canvas's box every frame while
// something shows, so they follow Fit, 1:1 (scrolled) and Resize alike. Motion is CSS, off under
// prefers-reduced-motion (media/overlay.css): the marks still show, without moving.
import type { AgentMark, WebviewToHost } from '../src/protocol';
import { boardPercent, relativeBox, type Point, type Size } from './overlayGeometry';

/** How long a ripple, a drag path or a scroll arrow stays. */
const MARK_MS = 2000;
/** How long the words stay after the last action. */
const CAPTION_MS = 2500;
/** The ghost pointer fades after this long without an action. */
const POINTER_IDLE_MS = 4000;
/** At most one action per this long is announced: a busy agent would drown everything else out. */
const ANNOUNCE_GAP_MS = 10_000;

const SVG = 'http://www.w3.org/2000/svg';

export class ActionOverlay {
  private enabled = true;
  private readonly toggle: HTMLButtonElement;
  /** Covers the part of the stage where the screen shows; clips what lies outside it. */
  private readonly layer: HTMLDivElement;
  /** The drawn screen's box (scaled, or scrolled in 1:1): marks sit in percent of it. */
  private readonly board: HTMLDivElement;
  private readonly pointer: HTMLDivElement;
  private readonly caption: HTMLDivElement;
  /** Until when something shows (the frame loop keeps the board on the canvas until then). */
  private showingUntil = 0;
  private looping = false;
  private lastAnnounced = -Infinity;
  private pointerTimer = 0;
  private captionTimer = 0;

  constructor(
    bar: HTMLElement,
    before: Element | null,
    private readonly stage: HTMLElement,
    private readonly screen: HTMLElement,
    private readonly post: (message: WebviewToHost) => void,
    private readonly announce: (text: string) => void,
  ) {
    this.toggle = document.createElement('button');
    this.toggle.className = 'icon overlay-toggle';
    this.toggle.append(pointerIcon(14));
    this.toggle.addEventListener('click', () => {
      this.set(!this.enabled);
      this.post({ type: 'overlay', enabled: this.enabled });
    });
    bar.insertBefore(this.toggle, before);

    this.layer = element('div', 'overlay');
    this.layer.setAttribute('aria-hidden', 'true');
    this.board = element('div', 'overlay-board');
    this.pointer = element('div', 'overlay-pointer');
    this.pointer.append(pointerIcon(20));
    this.pointer.hidden = true;
    this.caption = element('div', 'overlay-caption');
    this.caption.hidden = true;
    this.board.append(this.pointer);
    this.layer.append(this.board, this.caption);
    stage.append(this.layer);
    this.render();
  }

  /** The host's state (the setting) and the toggle's label. */
  setState(enabled: boolean, label: string): void {
    this.toggle.title = label;
    this.toggle.setAttribute('aria-label', label);
    this.set(enabled);
  }

  /** Draws an agent action that began at the host's `atMs`. */
  show(mark: AgentMark, atMs: number): void {
    const receivedAt = Date.now();
    const canvas = this.screen.querySelector('canvas');
    if (!this.enabled || !canvas || canvas.width === 0 || canvas.height === 0) {
      return; // off, or no screen drawn to draw over
    }
    const size: Size = { width: canvas.width, height: canvas.height };
    const stamp = (node: HTMLElement) => {
      node.dataset.actionAt = String(atMs);
      node.dataset.receivedAt = String(receivedAt);
      // The frame it first shows in.
      requestAnimationFrame(() => (node.dataset.drawnAt = String(Date.now())));
    };
    if (mark.at) {
      this.movePointer(mark.at, size, mark.kind === 'drag');
    }
    switch (mark.kind) {
      case 'click':
        if (mark.at) {
          stamp(this.ripple(mark.at, size, mark.button ?? 'left', mark.double === true));
        }
        break;
      case 'drag':
        if (mark.at && mark.to) {
          stamp(this.path(mark.at, mark.to, size));
          // The ghost starts at the drag's start, then follows it to its end.
          const to = mark.to;
          requestAnimationFrame(() => requestAnimationFrame(() => this.movePointer(to, size, false)));
        }
        break;
      case 'scroll':
        if (mark.at) {
          stamp(this.scrollArrow(mark.at, size, mark.direction ?? 'down'));
        }
        break;
      default:
        break;
    }
    this.caption.textContent = mark.words;
    this.caption.dataset.kind = mark.kind;
    this.caption.hidden = false;
    stamp(this.caption);
    window.clearTimeout(this.captionTimer);
    this.captionTimer = window.setTimeout(() => (this.caption.hidden = true), CAPTION_MS);
    if (receivedAt - this.lastAnnounced >= ANNOUNCE_GAP_MS) {
      this.lastAnnounced = receivedAt;
      this.announce(mark.words);
    }
    this.keepShowing(Math.max(MARK_MS, CAPTION_MS, POINTER_IDLE_MS));
  }

  private set(enabled: boolean): void {
    this.enabled = enabled;
    if (!enabled) {
      this.clear();
    }
    this.render();
  }

  private render(): void {
    this.toggle.setAttribute('aria-pressed', String(this.enabled));
    this.layer.hidden = !this.enabled;
    this.layer.dataset.enabled = String(this.enabled);
  }

  /** Removes every mark at once (the overlay was turned off). */
  private clear(): void {
    for (const mark of this.board.querySelectorAll('.overlay-mark')) {
      mark.remove();
    }
    this.pointer.hidden = true;
    this.caption.hidden = true;
    this.showingUntil = 0;
  }

  private movePointer(at: Point, size: Size, jump: boolean): void {
    const shown = !this.pointer.hidden;
    // A pointer that was not showing appears at its target rather than sliding in from an old one.
    this.pointer.classList.toggle('jump', jump || !shown);
    place(this.pointer, at, size);
    this.pointer.hidden = false;
    window.clearTimeout(this.pointerTimer);
    this.pointerTimer = window.setTimeout(() => (this.pointer.hidden = true), POINTER_IDLE_MS);
  }

  private ripple(at: Point, size: Size, button: 'left' | 'middle' | 'right', double: boolean): HTMLElement {
    const ripple = this.mark('overlay-ripple', at);
    place(ripple, at, size);
    ripple.dataset.button = button;
    ripple.dataset.double = String(double);
    ripple.append(element('div', 'ring'));
    if (double) {
      ripple.append(element('div', 'ring second'));
    }
    ripple.append(mouseIcon(button));
    return ripple;
  }

  /** The drag's path over the whole board (in screen pixels), with a dot at each end. */
  private path(from: Point, to: Point, size: Size): HTMLElement {
    const holder = this.mark('overlay-drag', from);
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', `0 0 ${size.width} ${size.height}`);
    svg.setAttribute('preserveAspectRatio', 'none');
    const line = document.createElementNS(SVG, 'line');
    line.setAttribute('x1', String(from.x + 0.5));
    line.setAttribute('y1', String(from.y + 0.5));
    line.setAttribute('x2', String(to.x + 0.5));
    line.setAttribute('y2', String(to.y + 0.5));
    line.setAttribute('vector-effect', 'non-scaling-stroke');
    svg.append(line);
    holder.append(svg);
    place(this.mark('overlay-drag-end', from), from, size);
    place(this.mark('overlay-drag-end', to), to, size);
    return holder;
  }

  private scrollArrow(at: Point, size: Size, direction: 'up' | 'down' | 'left' | 'right'): HTMLElement {
    const arrow = this.mark('overlay-scroll', at);
    place(arrow, at, size);
    arrow.dataset.direction = direction;
    arrow.textContent = { up: '↑', down: '↓', left: '←', right: '→' }[direction];
    return arrow;
  }

  /** A transient mark for screen point `at` (in its data-x/y), removed after MARK_MS. */
  private mark(kind: string, at: Point): HTMLElement {
    const mark = element('div', `overlay-mark ${kind}`);
    mark.dataset.x = String(at.x);
    mark.dataset.y = String(at.y);
    this.board.append(mark);
    window.setTimeout(() => mark.remove(), MARK_MS);
    return mark;
  }

  /** Keeps the board on the canvas every frame for `ms` more (scrolling, resizing, a new session). */
  private keepShowing(ms: number): void {
    this.showingUntil = Math.max(this.showingUntil, Date.now() + ms);
    this.follow();
    if (!this.looping) {
      this.looping = true;
      const frame = () => {
        if (Date.now() > this.showingUntil) {
          this.looping = false;
          return;
        }
        this.follow();
        requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    }
  }

  /** Puts the layer on the screen's visible area and the board on the canvas's box. */
  private follow(): void {
    const canvas = this.screen.querySelector('canvas');
    const view = canvas?.parentElement;
    if (!canvas || !view) {
      this.board.hidden = true;
      return;
    }
    this.board.hidden = false;
    const stage = this.stage.getBoundingClientRect();
    const viewBox = view.getBoundingClientRect();
    // The view's client area: its scrollbars (1:1) are not covered.
    const layer = relativeBox({ left: viewBox.left + view.clientLeft, top: viewBox.top + view.clientTop, width: view.clientWidth, height: view.clientHeight }, stage);
    setBox(this.layer, layer);
    setBox(this.board, relativeBox(canvas.getBoundingClientRect(), { ...layer, left: layer.left + stage.left, top: layer.top + stage.top }));
  }
}

function element(tag: 'div', className: string): HTMLDivElement {
  const node = document.createElement(tag);
  node.className = className;
  return node;
}

function place(node: HTMLElement, at: Point, size: Size): void {
  const p = boardPercent(at, size);
  node.style.left = `${p.x}%`;
  node.style.top = `${p.y}%`;
}

function setBox(node: HTMLElement, box: { left: number; top: number; width: number; height: number }): void {
  node.style.left = `${box.left}px`;
  node.style.top = `${box.top}px`;
  node.style.width = `${box.width}px`;
  node.style.height = `${box.height}px`;
}

/** An arrow pointer, its tip at the box's top left corner. */
function pointerIcon(px: number): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', String(px));
  svg.setAttribute('height', String(px));
  svg.setAttribute('aria-hidden', 'true');
  const arrow = document.createElementNS(SVG, 'path');
  arrow.setAttribute('d', 'M1 1 L1 13 L4.5 9.8 L7 15 L9 14 L6.6 8.8 L11.5 8.8 Z');
  svg.append(arrow);
  return svg;
}

/** A mouse with the pressed button filled. */
function mouseIcon(button: 'left' | 'middle' | 'right'): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 12 18');
  svg.setAttribute('class', 'mouse');
  const body = document.createElementNS(SVG, 'rect');
  body.setAttribute('x', '0.5');
  body.setAttribute('y', '0.5');
  body.setAttribute('width', '11');
  body.setAttribute('height', '17');
  body.setAttribute('rx', '5.5');
  const pressed = document.createElementNS(SVG, 'path');
  pressed.setAttribute('class', 'pressed');
  pressed.setAttribute(
    'd',
    { left: 'M6 0.5 A5.5 5.5 0 0 0 0.5 6 L0.5 7 L6 7 Z', right: 'M6 0.5 A5.5 5.5 0 0 1 11.5 6 L11.5 7 L6 7 Z', middle: 'M5 2.5 L7 2.5 L7 6 L5 6 Z' }[button],
  );
  const seam = document.createElementNS(SVG, 'path');
  seam.setAttribute('d', 'M0.5 7 L11.5 7 M6 0.5 L6 7');
  svg.append(body, pressed, seam);
  return svg;
}
