// The webview's side of the transports: the direct channel (a WebSocket to the loopback server of
// the extension's bridge process, src/core/directChannel.ts) when the host offers it, else postMessage; both
// handed to noVNC as the same channel shape (./channel.ts).
import { ackMessage, parseVisibility, SUBPROTOCOL } from '../src/core/directProtocol';
import type { WebviewToHost } from '../src/protocol';
import { createChannel, type ScreenChannel } from './channel';
import type { ScreenStats } from './stats';

/** A socket that has not opened by then is given up: the next address is tried, then postMessage. */
const DIAL_TIMEOUT_MS = 5000;
/**
 * The next address is dialled too when the earlier ones have not opened by then. An earlier one
 * that leads nowhere (a forwarder that is not running, whose server answers the upgrade itself)
 * took a whole failed handshake on the path of every open before the next was tried; on loopback
 * our own server opens in a few milliseconds.
 */
const NEXT_ADDRESS_AFTER_MS = 60;

export class Transports {
  /** Set once the direct channel failed in this document: later sessions go straight to postMessage. */
  private directFailed = false;

  constructor(
    private readonly post: (message: WebviewToHost) => void,
    private readonly stats: ScreenStats,
    /** Every chunk from the sandbox, for the session watch (./reconnect.ts). */
    private readonly onData: () => void = () => undefined,
    /** The host said on the socket that the view shows or hides (faster than its `visible` post). */
    private readonly onVisibility: (shown: boolean, seq: number) => void = () => undefined,
  ) {}

  /** The origin to send with `connect`: asks the host for the direct channel unless it failed here. */
  connectOrigin(): string | undefined {
    return this.directFailed ? undefined : location.origin;
  }

  /**
   * The channel of a session the host opened: the direct channel at the first of `urls` that
   * answers as ours, or postMessage when there are none. Undefined when the direct channel could
   * not be dialled: the caller asks the host again (`connect` then goes without an origin).
   */
  async open(urls: readonly string[] | undefined): Promise<ScreenChannel | undefined> {
    if (urls === undefined || urls.length === 0) {
      return this.messages();
    }
    const socket = await dialFirst(urls);
    if (socket) {
      return this.direct(socket);
    }
    this.directFailed = true;
    return undefined;
  }

  private messages(): ScreenChannel {
    this.stats.setTransport('postMessage');
    return createChannel(
      'postMessage',
      // VS Code's webview postMessage transfers ArrayBuffers: noVNC's reused send buffer is copied first.
      (data) => this.post({ type: 'rfb', data: data.slice() }),
      () => this.post({ type: 'disconnect' }),
    );
  }

  private direct(socket: WebSocket): ScreenChannel {
    this.stats.setTransport('direct');
    // WebSocket.send copies the bytes before it returns; closing the socket ends the session on the host.
    const channel = createChannel(
      'direct',
      (data) => socket.send(data),
      () => undefined,
      () => socket.close(),
    );
    socket.onmessage = (event: MessageEvent<ArrayBuffer | string>) => {
      if (typeof event.data === 'string') {
        const visibility = parseVisibility(event.data);
        if (visibility) {
          this.onVisibility(visibility.shown, visibility.seq);
        }
        return;
      }
      const bytes = event.data.byteLength;
      this.stats.received(bytes);
      this.onData();
      channel.deliver(event.data);
      // noVNC took the bytes synchronously: the host may send as many more (flow control).
      // The instance's own constant: the global `WebSocket` may be another class by now (a test's stand-in).
      if (socket.readyState === socket.OPEN) {
        socket.send(ackMessage(bytes));
      }
    };
    socket.onclose = (event) => channel.end(event.reason);
    return channel;
  }
}

/**
 * The first of `urls` to open as ours, each dialled when the ones before it failed or have not
 * opened within NEXT_ADDRESS_AFTER_MS; the others are closed. The token works once, so at most one
 * of them is accepted by the host. Undefined when none opened.
 */
function dialFirst(urls: readonly string[]): Promise<WebSocket | undefined> {
  return new Promise((resolve) => {
    let next = 0;
    let pending = 0;
    let won = false;
    let timer: number | undefined;
    const start = (): void => {
      window.clearTimeout(timer);
      if (won || next >= urls.length) {
        if (!won && pending === 0) {
          resolve(undefined);
        }
        return;
      }
      pending++;
      void dial(urls[next++]).then((socket) => {
        pending--;
        if (socket && !won) {
          won = true;
          window.clearTimeout(timer);
          resolve(socket);
        } else if (socket) {
          socket.close(); // another address won meanwhile
        } else {
          start(); // this one failed: the next at once
        }
      });
      timer = window.setTimeout(start, NEXT_ADDRESS_AFTER_MS);
    };
    start();
  });
}

/** Opens a WebSocket to our server; undefined when it fails, does not open in time, or is not ours. */
function dial(url: string): Promise<WebSocket | undefined> {
  return new Promise((resolve) => {
    let socket: WebSocket;
    try {
      socket = new WebSocket(url, SUBPROTOCOL);
    } catch {
      resolve(undefined);
      return;
    }
    socket.binaryType = 'arraybuffer';
    const timer = window.setTimeout(() => {
      socket.close();
      resolve(undefined);
    }, DIAL_TIMEOUT_MS);
    socket.onopen = () => {
      window.clearTimeout(timer);
      if (socket.protocol === SUBPROTOCOL) {
        resolve(socket);
      } else {
        socket.close();
        resolve(undefined);
      }
    };
    socket.onerror = socket.onclose = () => {
      window.clearTimeout(timer);
      resolve(undefined);
    };
  });
}
