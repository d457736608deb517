// Pauses an RFB session at the protocol level while its view is hidden: the server is asked to
// stop sending (continuous updates off, and noVNC's own update requests held back), so nothing is
// in flight when the host stops reading the relay, and showing the view asks at once for what
// changed meanwhile. Free of the DOM and of noVNC's classes, so a plain Node test drives it
// (test/unit/rfbPause.test.ts); webview/main.ts wires it to the session.
//
// Why not only stop reading the socket (the host does that too, as a backstop): a socket stalled
// for seconds with updates and fences queued in it left TigerVNC's congestion control thinking the
// link had a round trip of seconds, and the first frame after a reveal came ~350 ms after the
// first bytes.

import { ENABLE_CONTINUOUS_UPDATES, FRAMEBUFFER_UPDATE_REQUEST, isRectMessage, rectMessage, updateRequest } from '../src/core/rfbClientMessages';

/** What the pause needs of the session: noVNC's state that it reads and sets, and a way to the server. */
export interface PausableSession {
  /** Sends one whole client message to the server, past the pause's own filter. */
  send(message: Uint8Array): void;
  /** Whether noVNC runs continuous updates (it then sends no update requests of its own). */
  continuousUpdates: boolean;
  /** The framebuffer's size; 0 × 0 before the handshake finished. */
  readonly width: number;
  readonly height: number;
}

/** An incremental FramebufferUpdateRequest: what noVNC sends after each update when continuous updates are off. */
function isIncrementalRequest(data: Uint8Array): boolean {
  return isRectMessage(data, FRAMEBUFFER_UPDATE_REQUEST, 1);
}

export class RfbPause {
  private paused = false;
  /** Continuous updates were on when the pause began: they go on again when it ends. */
  private resumeContinuous = false;
  /** Counters for the connection panel and the benchmark. */
  readonly stats = { pauses: 0, heldRequests: 0 };

  constructor(private readonly session: PausableSession) {}

  get isPaused(): boolean {
    return this.paused;
  }

  /**
   * The view was hidden: continuous updates off (the server answers with EndOfContinuousUpdates,
   * on which noVNC turns to asking after each update, which `holds` then holds back). Before the
   * handshake finished there is nothing to pause.
   */
  pause(): void {
    if (this.paused || this.session.width === 0) {
      return;
    }
    this.paused = true;
    this.stats.pauses++;
    this.resumeContinuous = this.session.continuousUpdates;
    if (this.resumeContinuous) {
      this.session.send(rectMessage(ENABLE_CONTINUOUS_UPDATES, 0, this.session.width, this.session.height));
    }
  }

  /**
   * The view is shown again: continuous updates on again where they were, else one incremental
   * request. Either way the server sends at once all that changed meanwhile, and only that: it
   * tracks each client's changed region whether asked or not, and the view still shows the rest.
   * (A request for the whole screen cost a full-screen JPEG to encode, carry and decode on the way
   * to the first frame, where what changed is often a terminal's part of it.)
   */
  resume(): void {
    if (!this.paused) {
      return;
    }
    this.paused = false;
    const { width, height } = this.session;
    if (this.resumeContinuous) {
      this.session.send(rectMessage(ENABLE_CONTINUOUS_UPDATES, 1, width, height));
      // noVNC took the server's EndOfContinuousUpdates for "off": it is on again, so noVNC must
      // not ask after each update as well.
      this.session.continuousUpdates = true;
    } else {
      this.session.send(updateRequest(true, width, height));
    }
  }

  /**
   * True when a message noVNC sends is to be held back: while paused, its incremental update
   * requests (which would keep updates coming). Other messages pass; so does a request inside a
   * larger write, which then costs a few bytes the host's own pause holds back.
   */
  holds(data: Uint8Array): boolean {
    if (this.paused && isIncrementalRequest(data)) {
      this.stats.heldRequests++;
      return true;
    }
    return false;
  }
}
