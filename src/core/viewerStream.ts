// One viewer session's bytes, wherever its relay is read: here, posted to the webview
// (`PostedStream`), or in the bridge process, on the direct channel (./bridgeProcess.ts
// `BridgeSession`). The viewer (src/screenWebview.ts) drives either the same way.
import { HiddenRead, type HiddenReadTimes } from './hiddenRead';
import { RfbPump } from './pump';
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

/** A relay read in this process, its bytes posted to the webview (the fallback that always works). */
export class PostedStream implements ViewerStream {
  private readonly pump: RfbPump;
  private readonly reading: HiddenRead;

  constructor(
    private readonly relay: StreamProcess,
    post: (data: Uint8Array) => PromiseLike<boolean>,
    visible: boolean,
    times: HiddenReadTimes,
  ) {
    this.pump = new RfbPump(relay.stdout, post);
    this.reading = new HiddenRead(visible, () => ({ source: relay.stdout, reader: this.pump }), times);
    this.pump.setVisible(visible);
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

  setVisible(visible: boolean): void {
    this.reading.setVisible(visible);
  }

  end(last: readonly Uint8Array[]): void {
    this.reading.dispose();
    this.pump.dispose();
    endRelay(this.relay, last);
  }
}
