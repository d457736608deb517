// When a Screen viewer's relay is read while VS Code says the viewer is hidden. The webview pauses
// its RFB session on a hide (webview/rfbPause.ts); the relay is read on until it has gone quiet
// (./quiet.ts), then no more, so a hidden viewer receives 0 bytes. A webview that learns first
// that it shows again (the workbench focused it) turns continuous updates back on: that message
// starts reading at once, so the server's answer is not held in the relay until VS Code's
// "visible" has gone through the extension host.
import type { Readable } from 'node:stream';
import { whenQuiet } from './quiet';
import { ENABLE_CONTINUOUS_UPDATES, FRAMEBUFFER_UPDATE_REQUEST, isRectMessage } from './rfbClientMessages';

/**
 * True for what asks the server to send now: continuous updates turned on, or a non-incremental
 * FramebufferUpdateRequest. A webview that shows again turns continuous updates back on
 * (webview/rfbPause.ts); noVNC does so itself only at a session's start, once the relay was read
 * up to the server's first answer. A non-incremental request is the view's own check on a quiet
 * link while shown (webview/reconnect.ts). noVNC's ordinary requests are incremental, and a paused
 * webview holds those back.
 */
export function isResumeRequest(message: Uint8Array): boolean {
  return isRectMessage(message, FRAMEBUFFER_UPDATE_REQUEST, 0) || isRectMessage(message, ENABLE_CONTINUOUS_UPDATES, 1);
}

/** The part of a viewer's pump this decides on: whether the relay is read. */
export interface RelayReader {
  setVisible(visible: boolean): void;
}

/** What is read right now: the relay's output and the pump that reads it (both change per session). */
export interface ReadTarget {
  readonly source: Readable | undefined;
  readonly reader: RelayReader | undefined;
}

export interface HiddenReadTimes {
  /** A hidden viewer's relay is read until it has been quiet this long... */
  readonly quietMs: number;
  /** ...or this long at most. */
  readonly maxMs: number;
}

/**
 * One viewer's reading rule. VS Code's visibility decides; in between, a hidden viewer's relay is
 * read while it drains (until quiet, `maxMs` at most) and again from the moment the webview asks
 * the server to send (`isResumeRequest`), until VS Code says "visible" or, should VS Code not say it (the request
 * was not a reveal), the relay is quiet again: the same bound as after a hide.
 */
export class HiddenRead {
  private shown: boolean;
  /** Cancels the wait after which a hidden viewer's relay is no longer read. */
  private stopDrain: (() => void) | undefined;
  /** Reveals the webview told before VS Code did (the unit tests read it). */
  readonly stats = { earlyReveals: 0 };

  constructor(
    visible: boolean,
    private readonly target: () => ReadTarget,
    private readonly times: HiddenReadTimes,
  ) {
    this.shown = visible;
  }

  /** What VS Code says. */
  get visible(): boolean {
    return this.shown;
  }

  /** VS Code's visibility changed. */
  setVisible(visible: boolean): void {
    this.shown = visible;
    this.cancel();
    if (visible) {
      this.target().reader?.setVisible(true);
    } else {
      this.drainThenStop();
    }
  }

  /** A client message that passed the input gate on its way to the server. */
  clientMessage(message: Uint8Array): void {
    if (isResumeRequest(message)) {
      this.resumeRequested();
    }
  }

  /** The webview asked the server to send (a message `isResumeRequest` holds, seen elsewhere). */
  resumeRequested(): void {
    if (this.shown) {
      return;
    }
    this.stats.earlyReveals++;
    this.cancel();
    this.target().reader?.setVisible(true);
    this.drainThenStop();
  }

  dispose(): void {
    this.cancel();
  }

  /** Reads on until the relay is quiet (or `maxMs`), then stops unless VS Code said "visible" meanwhile. */
  private drainThenStop(): void {
    this.stopDrain = whenQuiet(this.target().source, this.times.quietMs, this.times.maxMs, () => {
      this.stopDrain = undefined;
      this.target().reader?.setVisible(this.shown);
    });
  }

  private cancel(): void {
    this.stopDrain?.();
    this.stopDrain = undefined;
  }
}
