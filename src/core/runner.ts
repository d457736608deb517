/** The one way core code runs a program: to completion, stoppable, or as a byte stream (execa underneath). */
import { execa } from 'execa';
import type { Readable, Writable } from 'node:stream';
import type { Command } from './command';

/** How long a probe (a status question to a CLI or a sandbox) may take. */
export const PROBE_TIMEOUT_MS = 15_000;

export interface RunResult {
  /** undefined when the process did not exit by itself (timeout, failed to start). */
  readonly exitCode: number | undefined;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  /** Set when the program could not be started at all (e.g. ENOENT: not installed). */
  readonly spawnError?: string;
}

/** A command paired with the parser of its result: what the argv asks and how to read the answer stay together. */
export interface ParsedCommand<T> extends Command {
  parse(result: RunResult): T;
}

/**
 * A long-lived command that reports events one a line (a runtime's `events` stream), paired with
 * the reader of a line: undefined for a line that is not an event the caller acts on.
 */
export interface EventCommand<T> extends Command {
  parseLine(line: string): T | undefined;
}

export interface RunOptions {
  readonly timeoutMs: number;
  /** Bytes for stdin; without them stdin is closed, so a probe can never hang on input. */
  readonly input?: string | Uint8Array;
}

/** Runs a command to completion, capturing its output; never throws for a non-zero exit. */
export async function run(cmd: Command, options: RunOptions): Promise<RunResult> {
  const result = await execa(cmd.command, [...cmd.args], {
    reject: false,
    timeout: options.timeoutMs,
    ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
    stripFinalNewline: false,
    env: { LC_ALL: 'C' },
  });
  return runResult(result);
}

function runResult(result: { exitCode?: number; stdout?: unknown; stderr?: unknown; timedOut: boolean }): RunResult {
  const code = (result as { code?: unknown }).code;
  return {
    exitCode: result.timedOut ? undefined : result.exitCode,
    stdout: String(result.stdout ?? ''),
    stderr: String(result.stderr ?? ''),
    timedOut: result.timedOut,
    spawnError: typeof code === 'string' && result.exitCode === undefined ? code : undefined,
  };
}

/** Runs a paired command and reads its answer. */
export async function runParsed<T>(cmd: ParsedCommand<T>, options: RunOptions): Promise<{ readonly result: RunResult; readonly value: T }> {
  const result = await run(cmd, options);
  return { result, value: cmd.parse(result) };
}

/** A command that can be told to stop (see `runStoppable`). */
export interface StoppableRun {
  readonly result: Promise<RunResult>;
  /**
   * Closes the command's stdin: a command that watches it (the in-sandbox action runner) stops
   * at once. The local process is killed as well if it has not ended `stopGraceMs` later.
   */
  stop(): void;
}

/** Like `run`, with stdin kept open (and empty) until `stop()` closes it. */
export function runStoppable(cmd: Command, options: { readonly timeoutMs: number; readonly stopGraceMs: number }): StoppableRun {
  const child = execa(cmd.command, [...cmd.args], {
    reject: false,
    timeout: options.timeoutMs,
    stdin: 'pipe',
    stripFinalNewline: false,
    env: { LC_ALL: 'C' },
  });
  child.stdin.on('error', () => undefined); // it may have exited already
  let timer: NodeJS.Timeout | undefined;
  const result = child.then(runResult).finally(() => clearTimeout(timer));
  return {
    result,
    stop: () => {
      if (timer === undefined) {
        child.stdin.end('\n'); // a byte reaches the far end sooner than the end of the stream
        timer = setTimeout(() => child.kill('SIGKILL'), options.stopGraceMs);
      }
    },
  };
}

/** A long-lived process whose stdio carries a byte stream (RFB, a forwarded port). */
export interface StreamProcess {
  readonly pid: number | undefined;
  readonly stdin: Writable;
  readonly stdout: Readable;
  /** Resolves with the exit code (null when killed by a signal) and the stderr tail. */
  readonly exited: Promise<{ exitCode: number | null; stderr: string }>;
  kill(): void;
}

export function openStream(cmd: Command): StreamProcess {
  const child = execa(cmd.command, [...cmd.args], {
    reject: false,
    buffer: { stdout: false, stderr: true },
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    stripFinalNewline: false,
  });
  // A peer that went away must not crash the extension host with EPIPE.
  child.stdin.on('error', () => undefined);
  child.stdout.on('error', () => undefined);
  const exited = child.then((result) => ({
    exitCode: result.exitCode ?? null,
    stderr: String(result.stderr ?? '').slice(-2000),
  }));
  return {
    pid: child.pid,
    stdin: child.stdin,
    stdout: child.stdout,
    exited,
    kill: () => {
      // Read what is left: Docker holds other execs into a container while an ended exec's
      // output sits unread (a paused, hidden viewer's relay would stall the stop that follows).
      child.stdout.resume();
      child.kill('SIGKILL');
    },
  };
}
