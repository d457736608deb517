/**
 * Running a program in the screen's X session inside its sandbox: the session's variables put
 * in front of the argv (`env NAME=VALUE... argv`, no shell), and a failed run turned into an
 * `ActionFailed` naming what failed. Shared by the agent's actions, screenshots and the person's
 * browser command.
 */
import { failureDetail } from '../failure';
import type { PublishedScreen } from '../launcher';
import type { RunResult } from '../runner';

/** How long one program in the session may run, unless its action says otherwise. */
export const EXEC_TIMEOUT_MS = 20_000;

/**
 * `env NAME=VALUE... argv`: runs argv with the screen's session variables. Names must be
 * environment names and values single-line, or this throws (they come from the launcher).
 */
export function withEnv(env: Readonly<Record<string, string>>, argv: readonly string[]): string[] {
  const assignments = Object.entries(env).map(([name, value]) => {
    if (!/^[A-Z_][A-Z0-9_]*$/.test(name) || /[\0\n\r]/.test(value)) {
      throw new TypeError(`unusable environment entry ${JSON.stringify(name)}`);
    }
    return `${name}=${value}`;
  });
  return ['env', ...assignments, ...argv];
}

/** Just what an X client needs of the session: DISPLAY, and XAUTHORITY where the screen has one. */
export function displayEnv(screen: PublishedScreen): Record<string, string> {
  const env: Record<string, string> = { DISPLAY: screen.env.DISPLAY ?? screen.display };
  if (screen.env.XAUTHORITY) {
    env.XAUTHORITY = screen.env.XAUTHORITY;
  }
  return env;
}

/** A program of an action failed; `what` names the step (e.g. `screenshot`), `detail` why. */
export class ActionFailed extends Error {
  constructor(readonly what: string, readonly detail: string) {
    super(`${what} failed: ${detail}`);
  }
}

/** Throws `ActionFailed` unless `result` is a successful exit. */
export function must(what: string, result: RunResult): void {
  if (result.exitCode !== 0) {
    throw new ActionFailed(what, failureDetail(result, { lines: 3, maxChars: 300, stderrOnly: true }));
  }
}
