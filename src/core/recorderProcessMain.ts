// The recorder process's entry (bundled as dist/recorder.js, forked by ./recorderProcess.ts): one
// Recorder (./recorder.ts) over one mux relay exec (./relayMux.ts) that this process runs itself,
// driven by the extension host's messages. It ends when told to, or when the extension host's
// IPC channel closes (the extension host went away): its files closed, its relay ended.
import type { Logger } from './logger';
import { leaveParent, parentLog } from './nodeProcess';
import { Recorder } from './recorder';
import type { FromRecorder, ToRecorder } from './recorderProcess';
import { openOwnedRelay } from './relay';
import { RelayMux } from './relayMux';

/**
 * How long the process waits for its files and relay to close before it exits anyway (within the
 * extension host's grace before it kills the process, ./recorderProcess.ts).
 */
const EXIT_GRACE_MS = 5000;

function tell(message: FromRecorder): void {
  if (process.connected) {
    process.send?.(message);
  }
}

const log: Logger = parentLog(tell);

let recorder: Recorder | undefined;
let mux: RelayMux | undefined;
let ending = false;

function init(message: Extract<ToRecorder, { t: 'init' }>): void {
  const relays = (mux = new RelayMux(
    () => openOwnedRelay(message.command, log, (exitCode, endedByOwner) => tell({ t: 'relayExited', exitCode, endedByOwner })),
    () => tell({ t: 'unreachable' }),
  ));
  recorder = new Recorder({
    dir: message.dir,
    screenId: message.screenId,
    maxBytes: message.maxBytes,
    log,
    openRelay: () => relays.connect(),
    segmentMs: message.segmentMs,
    minUpdateIntervalMs: message.minUpdateIntervalMs,
    watchedUpdateIntervalMs: message.watchedUpdateIntervalMs,
    writeTrouble: (why) => tell({ t: 'writeTrouble', why }),
  });
  recorder.setWatched(message.watched);
}

/** Closes the files and the relay; the process exits once nothing is left to do (or after a grace). */
function end(): void {
  if (ending) {
    return;
  }
  ending = true;
  recorder?.dispose();
  mux?.dispose();
  recorder = undefined;
  mux = undefined;
  leaveParent(EXIT_GRACE_MS);
}

process.on('message', (message: ToRecorder) => {
  if (ending) {
    return;
  }
  try {
    switch (message.t) {
      case 'init':
        init(message);
        break;
      case 'start':
        recorder?.start();
        break;
      case 'watched':
        recorder?.setWatched(message.watched);
        break;
      case 'event':
        recorder?.event(message.event);
        break;
      case 'dispose':
        end();
        break;
    }
  } catch (err) {
    // A recorder that cannot use its directory says why, and the process ends.
    const why = err instanceof Error ? err.message : String(err);
    log.error(`recorder: ${why}`);
    tell({ t: 'failed', message: why });
    end();
  }
});
process.on('disconnect', end);
