// The extension's own Node processes (the flight recorder, the direct channel's bridge): how the
// extension host forks one, and how one talks back over its IPC channel.
import { fork, type ChildProcess } from 'node:child_process';
import type { Logger } from './logger';

/**
 * Forks `script` with an IPC channel and stderr piped. Not with the extension host's own flags or
 * NODE_OPTIONS (an inspector port would clash); as Node in Electron (VS Code desktop), where the
 * variable does nothing in plain Node (a server). `advanced`: structured-clone messages, so
 * byte arrays cross as bytes instead of JSON arrays of numbers.
 */
export function forkNode(script: string, serialization: 'json' | 'advanced' = 'json'): ChildProcess {
  const { NODE_OPTIONS: _nodeOptions, ...env } = process.env;
  return fork(script, [], {
    execArgv: [],
    env: { ...env, ELECTRON_RUN_AS_NODE: '1' },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization,
  });
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
