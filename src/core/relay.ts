// The in-sandbox RFB relay: its command, and how a relay stream ends with its last bytes delivered.
import RELAY_SOURCE from './relay.py';
import type { Command } from './command';
import type { Logger } from './logger';
import { openStream, type StreamProcess } from './runner';
import type { Sandbox } from './sandbox';

export { RELAY_SOURCE };

/** The relay's exit code when it cannot reach the screen's socket (gone, refused, not ours). */
export const RELAY_EXIT_UNREACHABLE = 2;

/** The in-sandbox relay between the exec stream's stdio and the screen's unix socket. */
export function rfbRelayCommand(sandbox: Sandbox, socketPath: string): Command {
  return sandbox.exec(['python3', '-c', RELAY_SOURCE, socketPath], { interactive: true });
}

/**
 * One relay exec that carries several connections to the screen's socket (./relayMux.ts says
 * how): the flight recorder's, which starts a new connection every segment.
 */
export function rfbRelayMuxCommand(sandbox: Sandbox, socketPath: string): Command {
  return sandbox.exec(['python3', '-c', RELAY_SOURCE, 'mux', socketPath], { interactive: true });
}

/**
 * Runs a relay command and tells `exited` how it ended: `endedByOwner` when its owner killed it
 * or closed its stdin (a viewer that went, a recorder paused), which says nothing about the
 * sandbox. Used where the relay runs: a posting viewer's in the extension host (src/core/screen.ts),
 * a direct viewer's in the bridge process (./bridgeProcessMain.ts), the recorder's in its own
 * process (./recorderProcessMain.ts).
 */
export function openOwnedRelay(cmd: Command, log: Logger, exited: (exitCode: number | null, endedByOwner: boolean) => void): StreamProcess {
  const stream = openStream(cmd);
  let killed = false;
  void stream.exited.then(({ exitCode, stderr }) => {
    log.debug(`relay ${stream.pid} exited with ${exitCode}${stderr ? `: ${stderr.trim()}` : ''}`);
    exited(exitCode, killed || stream.stdin.writableEnded);
  });
  return {
    ...stream,
    kill: () => {
      killed = true;
      stream.kill();
    },
  };
}

/** How long a relay ended with last bytes may take to deliver them before it is killed. */
const END_GRACE_MS = 2000;

/**
 * Ends a viewer's relay. Without `last` it is killed at once. With `last` (the releases of keys
 * and buttons the viewer held) they are written and stdin is closed, so the relay delivers them
 * to Xvnc before it hangs up (a killed exec client can lose what it had not sent yet); it is
 * killed anyway if it has not ended within a grace period.
 */
export function endRelay(relay: StreamProcess, last: readonly Uint8Array[]): void {
  if (last.length === 0) {
    relay.kill();
    return;
  }
  for (const bytes of last) {
    relay.stdin.write(bytes);
  }
  relay.stdin.end();
  relay.stdout.resume(); // nobody reads it any more: never let the relay block on a full pipe
  const timer = setTimeout(() => relay.kill(), END_GRACE_MS);
  timer.unref?.();
  void relay.exited.then(() => clearTimeout(timer));
}
