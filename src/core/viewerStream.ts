// One viewer session's bytes, wherever its relay is read: here, posted to the webview
// (`PumpedRelay` with an `RfbPump`), or in the bridge process, on the direct channel (./bridgeProcess.ts
// `BridgeSession`). The viewer (src/screenWebview.ts) drives either the same way.
import { HiddenRead, type HiddenReadTimes } from './hiddenRead';
import { endRelay } from './relay';
import type { StreamProcess } from './runner';

export interface ViewerStream {
  /** Bytes the input gate let through, for the relay. */
  write(data: Uint8Array): void;
  /** A client message that passed the gate (one asking the server to send reads a hidden relay again). */
  observe(message: Uint8Array): void;
  /** VS Code's visibility of the viewer, its `seq`-th change. */
  setVisible(visible: boolean, seq: number): void;
  /** Ends the session: `last` reaches the screen before the relay hangs up. */
  end(last: readonly Uint8Array[]): void;
  /** Resolves when the relay has ended. */
  readonly exited: Promise<unknown>;
}

/** What reads a relay into a viewer (./pump.ts: `RfbPump` posts, `SocketPump` the direct channel). */
export interface RelayPump {
  setVisible(visible: boolean): void;
  dispose(): void;
}

/**
 * A relay read by a pump, under the hidden-read rule (./hiddenRead.ts): the extension host's
 * posted sessions (an `RfbPump`), the bridge process's direct ones (a `SocketPump`).
 */
export class PumpedRelay<P extends RelayPump> implements ViewerStream {
  private readonly reading: HiddenRead;

  constructor(
    readonly relay: StreamProcess,
    readonly pump: P,
    visible: boolean,
    times: HiddenReadTimes,
  ) {
    this.reading = new HiddenRead(visible, () => ({ source: relay.stdout, reader: pump }), times);
    pump.setVisible(visible);
  }

  get exited(): Promise<unknown> {
    return this.relay.exited;
  }

  write(data: Uint8Array): void {
    this.relay.stdin.write(data);
  }

  observe(message: Uint8Array): void {
    this.reading.clientMessage(message);
  }

  /** The webview asked the server to send (seen by the extension host's gate). */
  resumeRequested(): void {
    this.reading.resumeRequested();
  }

  setVisible(visible: boolean): void {
    this.reading.setVisible(visible);
  }

  /** Ends the session (a relay already gone is left as it is). */
  end(last: readonly Uint8Array[]): void {
    this.reading.dispose();
    this.pump.dispose();
    endRelay(this.relay, last);
  }
}
