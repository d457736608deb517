// Processes and polling for every kind of test: the unit and integration tests import these
// (through env.ts), the UI tests through test/ui/harness.mjs, the extension-host test modules
// directly. No product import, so any of them can load it.
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs a command for a check; returns its stdout ('' or what it printed on a non-zero exit). */
export function sh(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? '');
  }
}

/** Runs a setup step that must work: returns its stdout, throws (with its stderr) when it fails. */
export function run(command: string, args: string[]): string {
  return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Processes of this machine itself whose command line matches (`pgrep -a` lines). pgrep also sees
 * every container's processes (one kernel); only those in our own pid namespace run on the host.
 */
export function hostProcesses(pattern: string): string[] {
  const ours = readlinkSync('/proc/self/ns/pid');
  return sh('pgrep', ['-a', '-f', pattern])
    .split('\n')
    .filter(Boolean)
    .filter((line) => {
      try {
        return readlinkSync(`/proc/${line.split(' ')[0]}/ns/pid`) === ours;
      } catch {
        return false; // already gone
      }
    });
}

/**
 * Polls `fn` every `intervalMs` until it returns a truthy value, which it returns. An error it
 * throws counts as "not yet"; on timeout the error names `what` (or the function) and the last error.
 */
export async function waitFor<T>(fn: () => T | Promise<T>, timeoutMs = 10_000, intervalMs = 200, what?: string): Promise<NonNullable<T>> {
  const start = Date.now();
  let lastError: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() - start >= timeoutMs) {
      const label = what || fn.toString().replace(/\s+/g, ' ').slice(0, 160);
      throw new Error(`waitFor timed out after ${timeoutMs} ms: ${label}` +
        (lastError ? ` (last error: ${(lastError as Error).message ?? String(lastError)})` : ''));
    }
    await sleep(intervalMs);
  }
}
