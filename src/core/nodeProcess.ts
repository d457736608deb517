// The extension's own Node processes (the flight recorder, the direct channel's bridge): how the
// extension host forks one, and how one talks back over its IPC channel.
import { fork, type ChildProcess } from 'node:child_process';
import type { Logger } from './logger';

/**
 * Forks `script` with an IPC channel and stderr piped. Not with the extension host's own flags or
 * NODE_OPTIONS (an inspector port would clash); as Node in Electron (VS Code desktop), where the
 * variable does nothing in plain Node (a server). `advanced`: structured-clone messages, so
 * byte arrays cross as bytes instead of JSON arrays of numbers. `v8Flags`: the child's own V8
 * options (its heap's sizing), given to Node before the script.
 */
export function forkNode(script: string, serialization: 'json' | 'advanced' = 'json', v8Flags: readonly string[] = []): ChildProcess {
  const { NODE_OPTIONS: _nodeOptions, ...env } = process.env;
  return fork(script, [], {
    execArgv: [...v8Flags],
    env: { ...env, ELECTRON_RUN_AS_NODE: '1' },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization,
  });
}

/** The last 2000 characters the child wrote to stderr, for the log when it ends unasked. */
export function stderrTail(child: ChildProcess): () => string {
  let tail = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (tail = (tail + text).slice(-2000)));
  return () => tail;
}

/** Sends over the child's IPC channel while it is open (a child that ended takes nothing). */
export function tellChild(child: ChildProcess, message: unknown): void {
  if (child.connected) {
    child.send(message as object);
  }
}

/** A child told to end gets `graceMs` to do so, then SIGKILL. */
export function killAfter(child: ChildProcess, graceMs: number): void {
  if (child.exitCode !== null || child.signalCode !== null) {
    return;
  }
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  timer.unref();
  child.once('close', () => clearTimeout(timer));
}

/**
 * In a forked process that has let go of its work: it exits once nothing is left to do, or after
 * `graceMs` anyway; its IPC channel is closed so the extension host hears it ending.
 */
export function leaveParent(graceMs: number): void {
  setTimeout(() => process.exit(0), graceMs).unref();
  if (process.connected) {
    process.disconnect();
  }
}

/** In a forked process: a Logger whose lines go to the extension host's log over the IPC channel. */
export function parentLog(tell: (message: { t: 'log'; level: keyof Logger; message: string }) => void): Logger {
  return {
    debug: (message) => tell({ t: 'log', level: 'debug', message }),
    info: (message) => tell({ t: 'log', level: 'info', message }),
    warn: (message) => tell({ t: 'log', level: 'warn', message }),
    error: (message) => tell({ t: 'log', level: 'error', message }),
  };
}
