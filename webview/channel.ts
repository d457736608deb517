// The WebSocket-shaped channel over postMessage that noVNC reads the relay's bytes from.
import type { RawChannel } from '@novnc/novnc';

/**
 * A WebSocket-shaped channel over postMessage, as noVNC's `Websock.attach` expects: every name
 * it checks must be an own property (inherited ones fail with "Raw channel missing property").
 */
export interface PostMessageChannel extends RawChannel {
  /** Feeds bytes that came from the sandbox into noVNC. */
  deliver(data: Uint8Array): void;
  /** The relay ended: noVNC sees a close. */
  end(reason: string): void;
}

export function createChannel(sendToHost: (data: Uint8Array) => void, closeByViewer: () => void): PostMessageChannel {
  const channel: PostMessageChannel = {
    binaryType: 'arraybuffer',
    protocol: '',
    // 'open' at attach time makes noVNC start the RFB handshake at once.
    readyState: 'open',
    onopen: null,
    onmessage: null,
    onerror: null,
    onclose: null,
    send(data: Uint8Array) {
      if (channel.readyState === 'open') {
        // noVNC reuses its send buffer: copy before it leaves.
        sendToHost(data.slice());
      }
    },
    close() {
      if (channel.readyState === 'open') {
        channel.readyState = 'closed';
        closeByViewer();
        channel.onclose?.({ code: 1000, reason: '', wasClean: true });
      }
    },
    deliver(data: Uint8Array) {
      if (channel.readyState === 'open') {
        channel.onmessage?.({ data });
      }
    },
    end(reason: string) {
      if (channel.readyState === 'open') {
        channel.readyState = 'closed';
        channel.onclose?.({ code: 1006, reason, wasClean: false });
      }
    },
  };
  return channel;
}
