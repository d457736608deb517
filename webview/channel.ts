// The WebSocket-shaped channel noVNC reads the relay's bytes from, whichever transport carries
// them (postMessage, or the direct channel's WebSocket: ./transport.ts).
import type { RawChannel } from '@novnc/novnc';

/** Which way a session's bytes travel. */
export type TransportKind = 'direct' | 'postMessage';

/**
 * A WebSocket-shaped channel, as noVNC's `Websock.attach` expects: every name it checks must be
 * an own property (inherited ones fail with "Raw channel missing property").
 */
export interface ScreenChannel extends RawChannel {
  readonly transport: TransportKind;
  /** Feeds bytes that came from the sandbox into noVNC. */
  deliver(data: ArrayBuffer | Uint8Array): void;
  /** The relay ended: noVNC sees a close. */
  end(reason: string): void;
  /** Offered each message noVNC sends; true holds it back (a paused session: ./rfbPause.ts). */
  holds: ((data: Uint8Array) => boolean) | null;
}

/**
 * `sendToHost` must copy or send at once: noVNC reuses its send buffer. `closeByViewer` runs when
 * noVNC closes the channel; `closeTransport` when it ends, whoever ended it.
 */
export function createChannel(
  transport: TransportKind,
  sendToHost: (data: Uint8Array) => void,
  closeByViewer: () => void,
  closeTransport: () => void = () => undefined,
): ScreenChannel {
  const channel: ScreenChannel = {
    transport,
    binaryType: 'arraybuffer',
    protocol: '',
    // 'open' at attach time makes noVNC start the RFB handshake at once.
    readyState: 'open',
    onopen: null,
    onmessage: null,
    onerror: null,
    onclose: null,
    holds: null,
    send(data: Uint8Array) {
      if (channel.readyState === 'open' && !channel.holds?.(data)) {
        sendToHost(data);
      }
    },
    close() {
      if (channel.readyState === 'open') {
        channel.readyState = 'closed';
        closeByViewer();
        closeTransport();
        channel.onclose?.({ code: 1000, reason: '', wasClean: true });
      }
    },
    deliver(data: ArrayBuffer | Uint8Array) {
      if (channel.readyState === 'open') {
        // noVNC wraps what it gets in a Uint8Array: an ArrayBuffer is wrapped, a Uint8Array copied.
        const whole = data instanceof Uint8Array && data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
        channel.onmessage?.({ data: whole ? (data.buffer as ArrayBuffer) : data });
      }
    },
    end(reason: string) {
      if (channel.readyState === 'open') {
        channel.readyState = 'closed';
        closeTransport();
        channel.onclose?.({ code: 1006, reason, wasClean: false });
      }
    },
  };
  return channel;
}
