/**
 * What a sandbox backend is: the interface the controller drives (SandboxBackend) and the record
 * a backend registers once (BackendRecord, collected in registry.ts).
 */
import type { StartConsent } from '../consent';
import type { Logger } from '../logger';
import type { ProgressReporter } from '../progress';
import type { EventCommand } from '../runner';
import type { Sandbox } from '../sandbox';

/** What a marker needs to find a sandbox again: backend plus its own identity fields. */
export interface SandboxIdentity {
  readonly backend: string;
  /** Container id, ssh destination, apptainer instance, pod... */
  readonly id: string;
  readonly name: string;
}

export type Liveness = 'alive' | 'gone' | 'unknown';

/** What a runtime's event stream reports about a sandbox: reasons to check it at once. */
export type SandboxEvent = 'stopped' | 'removed';

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
   * The runtime's event stream for this sandbox, where the runtime has one (Docker, Podman): a
   * long-lived command whose lines say the sandbox stopped or was removed, replaying from
   * `sinceSeconds` ago. A running screen's sandbox is then checked only when an event comes
   * (the view says "gone" within a second or two, with no viewer's relay to break and no poll).
   */
  livenessEvents?(sandbox: Sandbox, sinceSeconds: number): EventCommand<SandboxEvent>;
  /**
   * Without events: the first interval of the poll that checks a running screen's sandbox (it
   * doubles while the answer stays the same; livenessWatch.ts). Default 5 s.
   */
  readonly livenessIntervalMs?: number;
  /**
   * The setting that names the image this backend creates its sandboxes from (full id): where a
   * desktop-less sandbox is fixed. Absent for backends that use a sandbox they are given.
   */
  readonly imageSetting?: string;
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

/**
 * Where a backend reads its settings from: the extension implements it over VS Code's
 * configuration (src/settings.ts), tests over plain objects. Keys are below `botScreen.`.
 */
export interface SettingsSource {
  /** The effective value (a workspace's included). */
  get<T>(key: string): T | undefined;
  /** The user's value, else the default: for the keys a record lists as user-only. */
  user<T>(key: string): T | undefined;
  /** Written by the user in the user settings, even to the default, and not the workspace's choice. */
  pinned(key: string): boolean;
  /** The workspace settings hold a value that differs from the user's. */
  fromWorkspace(key: string): boolean;
}

/** What every backend instance is made with besides its own settings. */
export interface BackendContext {
  /** This window's workspace key: names the sandboxes a backend creates. */
  readonly workspaceKey: string;
  readonly log: Logger;
  /** Told when a long step starts (a pull), for the person waiting. */
  readonly progress?: ProgressReporter;
}

/**
 * One backend, registered once in registry.ts: how its settings are read, how a marker's
 * identity is checked, and how an instance is made. Where its screen may go is placement.ts's table.
 */
export interface BackendRecord<S> {
  /** Keys (below `botScreen.`) that pick a program to run on this machine: read from the user settings only. */
  readonly userOnlySettings: readonly string[];
  /** Whether it makes its sandboxes from an image (`botScreen.sandbox.<name>.image`): the desktop comes with the image. */
  readonly fromImage: boolean;
  readSettings(source: SettingsSource): S;
  /** Whether a marker's recorded id and name have the form this backend gives its sandboxes. */
  isIdentity(identity: Pick<SandboxIdentity, 'id' | 'name'>): boolean;
  create(settings: S, context: BackendContext): SandboxBackend;
}

/** A setting's value as trimmed text; '' when unset. */
export function settingText(value: unknown): string {
  return String(value ?? '').trim();
}

/** Whether a parser accepts a recorded value (it throws a ScreenError when not). */
export function parses(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
}
