// The bridge process's entry (bundled as dist/bridge.js, forked by ./bridgeProcess.ts): the
// direct channel's loopback server and, per direct viewer, its relay exec, socket pump and
// hidden-read rule, driven by the extension host's messages. The screen's bytes go from the relay
// to the webview's socket here; the webview's messages go to the extension host's input gate and
// come back as writes. It ends when told to, or when the extension host's IPC channel closes.
import type { FromBridge, ToBridge } from './bridgeProcess';
import { DirectChannelServer, type DirectOffer, type DirectSocket } from './directChannel';
import { visibilityMessage } from './directProtocol';
import type { Logger } from './logger';
import { leaveParent, parentLog } from './nodeProcess';
import { SocketPump } from './pump';
import { PumpedRelay } from './viewerStream';
import { openOwnedRelay } from './relay';

/** The screen is in use while it sends: said to the extension host at most this often. */
const ACTIVITY_EVERY_MS = 5000;
/** How long the process waits for its relays to end before it exits anyway. */
const EXIT_GRACE_MS = 2500;

function tell(message: FromBridge): void {
  if (process.connected) {
    process.send?.(message);
  }
}

const log: Logger = parentLog(tell);

interface Session {
  readonly stream: PumpedRelay<SocketPump>;
  offer?: DirectOffer;
  socket?: DirectSocket;
}

const sessions = new Map<number, Session>();
let server: DirectChannelServer | undefined;
let ending = false;

function listen(): void {
  server ??= new DirectChannelServer((reason, detail) => log.warn(`direct channel: refused a connection (${reason}${detail ? `: ${detail}` : ''})`));
  server.start().then(
    (port) => tell({ t: 'listening', port }),
    (err: Error) => tell({ t: 'listenFailed', message: err.message }),
  );
}

function open(message: Extract<ToBridge, { t: 'open' }>): void {
  const { id } = message;
  const relay = openOwnedRelay(message.command, log, (exitCode, endedByOwner) => {
    drop(id);
    tell({ t: 'exited', id, exitCode, endedByOwner });
  });
  const stream = new PumpedRelay(relay, new SocketPump(relay.stdout), message.visible, { quietMs: message.quietMs, maxMs: message.maxMs });
  let said = 0;
  relay.stdout.on('data', () => {
    const now = Date.now();
    if (now - said >= ACTIVITY_EVERY_MS) {
      said = now;
      tell({ t: 'activity', id });
    }
  });
  sessions.set(id, { stream });
}

function offer(message: Extract<ToBridge, { t: 'offer' }>): void {
  const session = sessions.get(message.id);
  if (!session || !server) {
    return;
  }
  session.offer?.revoke();
  session.offer = server.offer(
    message.origin,
    (socket) => {
      session.offer = undefined;
      if (sessions.get(message.id) !== session) {
        socket.close();
        return;
      }
      session.socket = socket;
      socket.onMessage = (data) => tell({ t: 'input', id: message.id, data });
      socket.onAck = (bytes) => session.stream.pump.acked(bytes);
      socket.onClose = () => {
        if (session.socket === socket) {
          session.socket = undefined;
          tell({ t: 'socketClosed', id: message.id });
        }
      };
      session.stream.pump.attach(socket);
    },
    message.token,
  );
}

/** The session's token and socket go, and its relay ends (`last` written first; one already gone is left as it is). */
function drop(id: number, last: readonly Uint8Array[] = []): void {
  const session = sessions.get(id);
  if (!session) {
    return;
  }
  sessions.delete(id);
  session.offer?.revoke();
  const socket = session.socket;
  session.socket = undefined;
  socket?.close();
  session.stream.end(last);
}

function end(): void {
  if (ending) {
    return;
  }
  ending = true;
  for (const id of [...sessions.keys()]) {
    drop(id);
  }
  server?.dispose();
  leaveParent(EXIT_GRACE_MS);
}

process.on('message', (message: ToBridge) => {
  if (ending) {
    return;
  }
  try {
    heard(message);
  } catch (err) {
    // One session's trouble (a relay that cannot be spawned…) ends that session, not every viewer's.
    log.error(`bridge: ${message.t}: ${err instanceof Error ? err.message : String(err)}`);
    if ('id' in message) {
      drop(message.id);
      tell({ t: 'exited', id: message.id, exitCode: null, endedByOwner: false });
    }
  }
});
process.on('disconnect', end);

function heard(message: ToBridge): void {
  switch (message.t) {
    case 'listen':
      listen();
      break;
    case 'open':
      open(message);
      break;
    case 'offer':
      offer(message);
      break;
    case 'write':
      sessions.get(message.id)?.stream.write(message.data);
      break;
    case 'resume':
      sessions.get(message.id)?.stream.resumeRequested();
      break;
    case 'visible': {
      const session = sessions.get(message.id);
      session?.stream.setVisible(message.visible);
      session?.socket?.sendText(visibilityMessage(message.visible, message.seq));
      break;
    }
    case 'close':
      drop(message.id, message.last);
      break;
    case 'dispose':
      end();
      break;
  }
}
