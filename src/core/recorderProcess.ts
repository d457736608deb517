// The flight recorder in a process of its own: the extension host forks ./recorderProcessMain.ts
// (dist/recorder.js) per recorded screen and talks to it over Node's IPC channel. The recorder's
// second stream of the screen (a full-screen flood is megabytes a minute) is read, framed and
// written to disk there, so its bytes never pass the extension host, which every extension and
// every viewer's own stream share. The process runs the relay exec itself from the command the
// screen gives (src/core/screen.ts `relayCommand`); it ends when disposed, and on its own when
// the extension host goes (its IPC channel closes), ending its relay with it.
import type { ChildProcess } from 'node:child_process';
import type { Command } from './command';
import type { Logger } from './logger';
import { forkNode, killAfter, stderrTail, tellChild } from './nodeProcess';
import type { TimelineEvent } from './recordingFormat';

/** What the recorder process is told. `init` comes first, once. */
export type ToRecorder =
  | {
      readonly t: 'init';
      readonly dir: string;
      readonly screenId: string;
      readonly maxBytes: number;
      /** The relay exec, in mux mode (src/core/relay.ts `rfbRelayMuxCommand`). */
      readonly command: Command;
      readonly watched: boolean;
      /** Tests' shorter intervals (src/core/recorder.ts RecorderOptions). */
      readonly segmentMs?: number;
      readonly minUpdateIntervalMs?: number;
      readonly watchedUpdateIntervalMs?: number;
    }
  | { readonly t: 'start' }
  | { readonly t: 'watched'; readonly watched: boolean }
  | { readonly t: 'event'; readonly event: TimelineEvent }
  | { readonly t: 'dispose' };

/** What it tells back. */
export type FromRecorder =
  | { readonly t: 'log'; readonly level: keyof Logger; readonly message: string }
  /** The relay exec ended; `endedByOwner` when the recorder killed it or closed its stdin. */
  | { readonly t: 'relayExited'; readonly exitCode: number | null; readonly endedByOwner: boolean }
  /** A connection over the relay could not reach the screen's socket. */
  | { readonly t: 'unreachable' }
  /** It cannot record (its directory cannot be used…) and ends. */
  | { readonly t: 'failed'; readonly message: string }
  /** Its segments do not reach the disk (why), or do again (no `why`): it runs on and retries. */
  | { readonly t: 'writeTrouble'; readonly why?: string };

/** How a recorder process was lost, for the person (the log has its whole story). */
export interface RecorderLoss {
  /** The signal that ended it, or else its exit code. */
  readonly signal?: string;
  readonly code?: number;
  /** It never started: the spawn's error. */
  readonly spawnError?: string;
  /** What it said went wrong before it ended. */
  readonly failure?: string;
}

/** What the recorder records, and how (the `init` message). */
export type RecorderInit = Omit<Extract<ToRecorder, { t: 'init' }>, 't'>;

/** Where the process's script is, and what the extension host hears from it. */
export interface RecorderProcessOptions {
  /** The built ./recorderProcessMain.ts (dist/recorder.js). */
  readonly script: string;
  readonly log: Logger;
  /** The relay exec ended (the screen decides whether that says something about the sandbox). */
  readonly relayExited?: (exitCode: number | null, endedByOwner: boolean) => void;
  readonly unreachable?: () => void;
  /** Segments do not reach the disk (why), or do again (undefined). */
  readonly writeTrouble?: (why: string | undefined) => void;
  /** The process ended without being disposed (it crashed, was killed or could not record): `why` for the log. */
  readonly lost?: (why: string, loss: RecorderLoss) => void;
}

/** How long a disposed recorder may take to close its files and end its relay before it is killed. */
const DISPOSE_GRACE_MS = 6000;

/** The recorder of one running screen, in its own process; started once; pausing is disposing (a paused screen has no recorder process). */
export class RecorderProcess {
  private readonly child: ChildProcess;
  private readonly exitedPromise: Promise<void>;
  private disposed = false;
  private readonly stderr: () => string;
  private failure: string | undefined;

  constructor(
    private readonly options: RecorderProcessOptions,
    init: RecorderInit,
  ) {
    this.child = forkNode(options.script);
    this.stderr = stderrTail(this.child);
    this.child.on('message', (message: FromRecorder) => this.heard(message));
    let spawnError = '';
    this.child.on('error', (err) => {
      // A process that could not start (EAGAIN, EMFILE…) never exits: its close says it ended.
      if (this.child.pid === undefined) {
        spawnError = err.message;
      } else {
        options.log.warn(`recorder process: ${err.message}`);
      }
    });
    this.exitedPromise = new Promise((resolve) =>
      this.child.once('close', (code, signal) => {
        if (!this.disposed) {
          const how = spawnError ? `could not start: ${spawnError}` : `ended (${signal ?? `code ${code}`})`;
          const why = `the recorder process ${how}${this.stderr() ? `: ${this.stderr().trim()}` : ''}`;
          options.log.error(why);
          options.lost?.(why, { signal: signal ?? undefined, code: code ?? undefined, spawnError: spawnError || undefined, failure: this.failure });
        }
        resolve();
      }),
    );
    this.send({ t: 'init', ...init });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  start(): void {
    this.send({ t: 'start' });
  }

  setWatched(watched: boolean): void {
    this.send({ t: 'watched', watched });
  }

  event(event: TimelineEvent): void {
    this.send({ t: 'event', event });
  }

  /** Ends the recording: resolves once the process closed its files, ended its relay and exited. */
  dispose(): Promise<void> {
    if (!this.disposed) {
      this.disposed = true;
      this.send({ t: 'dispose' });
      killAfter(this.child, DISPOSE_GRACE_MS);
    }
    return this.exitedPromise;
  }

  private send(message: ToRecorder): void {
    tellChild(this.child, message);
  }

  private heard(message: FromRecorder): void {
    switch (message.t) {
      case 'log':
        this.options.log[message.level](message.message);
        break;
      case 'relayExited':
        this.options.relayExited?.(message.exitCode, message.endedByOwner);
        break;
      case 'unreachable':
        this.options.unreachable?.();
        break;
      case 'failed':
        this.failure = message.message;
        break;
      case 'writeTrouble':
        this.options.writeTrouble?.(message.why);
        break;
    }
  }
}
