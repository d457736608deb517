import type { Command } from '../command';
import type { StartConsent } from '../consent';
import type { RunResult } from '../runner';
import { ScreenError, type Problem } from '../problem';
import { run } from '../runner';
import type { Sandbox } from '../sandbox';

/** What a marker needs to find a sandbox again: backend plus its own identity fields. */
export interface SandboxIdentity {
  readonly backend: string;
  /** Container id, ssh destination, apptainer instance, pod... */
  readonly id: string;
  readonly name: string;
}

export type Liveness = 'alive' | 'gone' | 'unknown';

/**
 * One sandbox backend (docker, podman, ssh, ...). Backends only build argv and interpret output;
 * everything runs through the runner.
 */
export interface SandboxBackend {
  /**
   * The sandbox for a start: created or reused as the backend's rules say. A step the workspace
   * asks for but the user has not approved (replacing a container, a new SSH host) goes through
   * `consent` first; without one it is refused.
   */
  prepare(consent?: StartConsent): Promise<Sandbox>;
  /** The sandbox of a screen that may already run; never creates or starts anything. */
  find(): Promise<Sandbox | undefined>;
  /** A sandbox from a recorded identity (a marker), without checking it. */
  fromIdentity(identity: SandboxIdentity): Promise<Sandbox>;
  /** Whether the sandbox still exists; a CLI error or timeout is `unknown`, never `gone`. */
  liveness(sandbox: Sandbox): Promise<Liveness>;
  /**
   * How often a running screen's sandbox is checked. A local `docker inspect` is cheap enough
   * for every second (the view must say "gone" within 2 s even with no viewer's relay to break);
   * an ssh login or a kubectl call is not, and those backends default to 5 s.
   */
  readonly livenessIntervalMs?: number;
  /** Ends connections kept open between commands (ssh's control master) when the window closes. */
  disconnect?(): Promise<void>;
  /** Only backends that create their own sandboxes from an image can have a pending switch. */
  pendingSwitch?(): Promise<ImageSwitch | undefined>;
}

/** Our sandbox runs an image other than the (unpinned) default: a decision for the user. */
export interface ImageSwitch {
  readonly current: string;
  readonly target: string;
  readonly containerId: string;
}

export const PROBE_TIMEOUT_MS = 15_000;

export function commandFailed(what: string, result: RunResult): Problem {
  const detail = (result.stderr || result.stdout).trim().slice(-1000) || (result.timedOut ? 'timed out' : `exit ${result.exitCode}`);
  return { code: 'commandFailed', what, detail };
}

export async function mustSucceed(what: string, command: Command, timeoutMs = 120_000): Promise<RunResult> {
  const result = await run(command, { timeoutMs });
  if (result.exitCode !== 0) {
    throw new ScreenError(commandFailed(what, result));
  }
  return result;
}
