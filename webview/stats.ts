// Connection statistics of one Screen viewer: what the connection panel (./connectionPanel.ts)
// shows, and what the UI tests and the benchmark read. The numbers live as data-* attributes on
// the panel's element, present whether or not the panel is shown, so nothing but the DOM exposes
// them (no global object).
import Display from '../node_modules/@novnc/novnc/core/display.js';
import type { TransportKind } from './channel';

/** The viewer's RFB session, as the panel names it. */
export type Connection = 'idle' | 'connecting' | 'live' | 'closed';

let onFlip: (() => void) | undefined;

/**
 * noVNC has no event for "a framebuffer update is on the canvas": its RFB events cover
 * connect, disconnect and clipboard only, and a decoded update may still wait in the
 * display's render queue (JPEG rectangles decode asynchronously). `Display.flip` is where the
 * update reaches the visible canvas, so it is wrapped, once, in the same module instance rfb.js
 * imports (esbuild dedupes by path). A flip while the queue holds work only queues the flip
 * (it runs later with `fromQueue`), so that call is not counted: each frame counts once, when
 * drawn. The wrapper adds one call and a few counter writes to a flip, nothing that touches
 * layout.
 */
function hookDisplayFlips(): void {
  const flip = Display.prototype.flip;
  Display.prototype.flip = function (this: InstanceType<typeof Display>, fromQueue?: boolean) {
    const drawsNow = fromQueue === true || !this.pending();
    flip.call(this, fromQueue);
    if (drawsNow) {
      onFlip?.();
    }
  };
}
hookDisplayFlips();

export class ScreenStats {
  connection: Connection = 'idle';
  hostState = '';
  inControl = false;
  /** Which way the current session's bytes travel (data-transport). */
  transport: TransportKind | undefined;
  /** RFB sessions opened by this document; reconnects are one less. */
  connects = 0;
  /** Framebuffer updates drawn in the current session. */
  framesDrawn = 0;
  /** RFB bytes received from the sandbox, over the document's life. */
  bytesIn = 0;
  /** Date.now() of the current session's start, its first drawn frame, its last drawn frame. */
  openedAt = 0;
  firstFrameAt = 0;
  lastFrameAt = 0;

  /**
   * `element` carries the numbers as data-* attributes. They are written when they change: a
   * frame or a chunk of bytes costs one attribute write on an element no style rule selects by
   * these attributes, so no style recalculation or layout follows, and a reader (a test waiting
   * for the next frame) always sees the current value.
   */
  constructor(
    private readonly element: HTMLElement,
    private readonly firstFrame: (atMs: number) => void,
  ) {
    onFlip = () => this.frameDrawn();
    this.write();
  }

  sessionOpened(): void {
    this.connects++;
    this.framesDrawn = 0;
    this.firstFrameAt = 0;
    this.lastFrameAt = 0;
    this.openedAt = Date.now();
    this.write();
  }

  setConnection(connection: Connection): void {
    this.connection = connection;
    this.element.dataset.state = connection;
  }

  setTransport(transport: TransportKind): void {
    this.transport = transport;
    this.element.dataset.transport = transport;
  }

  setHostState(state: string): void {
    this.hostState = state;
    this.element.dataset.hostState = state;
  }

  setInControl(mine: boolean): void {
    this.inControl = mine;
    this.element.dataset.inControl = String(mine);
  }

  /**
   * The session was paused at the RFB level (the view hidden) or resumed: data-rfb-paused, and
   * data-resumed-at the Date.now() when the resume went to the server (where a reveal's time goes),
   * data-resumed-by what told the page that it shows again (the host's word on the direct channel, its `visible` post, or the workbench's focus).
   */
  setPaused(paused: boolean, resumedBy?: 'socket' | 'post' | 'focus'): void {
    this.element.dataset.rfbPaused = String(paused);
    if (!paused && resumedBy) {
      this.element.dataset.resumedAt = String(Date.now());
      this.element.dataset.resumedBy = resumedBy;
    }
  }

  received(bytes: number): void {
    this.bytesIn += bytes;
    this.element.dataset.bytesIn = String(this.bytesIn);
  }

  private frameDrawn(): void {
    // noVNC also flips while it sets up (a resize or a scale change before the server's first
    // update): that draws nothing of the screen, and must not count as the session's first frame.
    if (this.connection !== 'live') {
      return;
    }
    const now = Date.now();
    this.framesDrawn++;
    this.lastFrameAt = now;
    this.element.dataset.frames = String(this.framesDrawn);
    this.element.dataset.lastFrameAt = String(now);
    if (this.framesDrawn === 1) {
      this.firstFrameAt = now;
      this.element.dataset.firstFrameAt = String(now);
      this.firstFrame(now);
    }
  }

  private write(): void {
    const data = this.element.dataset;
    data.state = this.connection;
    data.hostState = this.hostState;
    data.inControl = String(this.inControl);
    data.connects = String(this.connects);
    data.frames = String(this.framesDrawn);
    data.bytesIn = String(this.bytesIn);
    data.openedAt = String(this.openedAt);
    data.firstFrameAt = String(this.firstFrameAt);
    data.lastFrameAt = String(this.lastFrameAt);
  }
}
