/**
 * The backends, registered once: one record per backend that can host a screen (its settings,
 * how a marker's identity is checked, how an instance is made). A new backend is its own file,
 * one line here, its name in placement.ts's table and its settings in package.json.
 */
import type { Logger } from '../logger';
import { isExecBackend, type BackendName, type ExecBackend, type Placement } from '../placement';
import type { ProgressReporter } from '../progress';
import { APPTAINER } from './apptainer';
import type { BackendRecord, SandboxBackend, SandboxIdentity, SettingsSource } from './backend';
import { DOCKER, PODMAN } from './docker';
import { HostBackend } from './host';
import { KUBERNETES } from './kubernetes';
import { SSH } from './ssh';

const BACKEND_RECORDS = {
  docker: DOCKER,
  podman: PODMAN,
  ssh: SSH,
  apptainer: APPTAINER,
  kubernetes: KUBERNETES,
} satisfies Record<ExecBackend, BackendRecord<unknown>>;

type Records = typeof BACKEND_RECORDS;

/** Every backend's own settings, by backend name (`settings.docker`, `settings.ssh`, ...). */
export type BackendSettings = { readonly [K in ExecBackend]: Records[K] extends BackendRecord<infer S> ? S : never };

/** Keys (below `botScreen.`) of every backend's settings that count only from the user settings. */
export const BACKEND_USER_ONLY_SETTINGS: readonly string[] = Object.values(BACKEND_RECORDS).flatMap((record) => record.userOnlySettings);

/** Every backend's settings, read through its record. */
export function readBackendSettings(source: SettingsSource): BackendSettings {
  return Object.fromEntries(Object.entries(BACKEND_RECORDS).map(([name, record]) => [name, record.readSettings(source)])) as BackendSettings;
}

/** Whether a backend makes its sandboxes from an image (so the desktop comes with the image). */
export function makesSandboxFromImage(backend: BackendName): boolean {
  return isExecBackend(backend) && BACKEND_RECORDS[backend].fromImage;
}

/** Whether a marker's sandbox identity has the form its backend gives its sandboxes. */
export function isBackendIdentity(backend: ExecBackend, identity: Pick<SandboxIdentity, 'id' | 'name'>): boolean {
  return BACKEND_RECORDS[backend].isIdentity(identity);
}

/**
 * Makes the backends for one window's screen controller. An instance is kept while its settings
 * stay the same, so what it learnt (which user a container's desktop runs as) lives as long as
 * the controller, and a settings change starts afresh.
 */
export class SandboxBackends {
  private readonly made = new Map<ExecBackend, { readonly key: string; readonly backend: SandboxBackend }>();

  /** `progress` hears of the long steps of a start (a pull), for the person waiting. */
  constructor(private readonly progress?: ProgressReporter) {}

  /**
   * The backend that hosts a placement's screen; undefined for a refused placement, and for a
   * backend name this version does not know (a marker written by another version).
   */
  backendFor(placement: Placement, settings: BackendSettings & { readonly workspaceKey: string }, log: Logger): SandboxBackend | undefined {
    if (placement.where === 'host') {
      return new HostBackend(placement.backend);
    }
    if (placement.where !== 'sandbox' || !Object.hasOwn(BACKEND_RECORDS, placement.backend)) {
      return undefined;
    }
    const name = placement.backend;
    const own = settings[name];
    const key = JSON.stringify([settings.workspaceKey, own]);
    const kept = this.made.get(name);
    if (kept?.key === key) {
      return kept.backend;
    }
    const record = BACKEND_RECORDS[name] as BackendRecord<typeof own>;
    const backend = record.create(own, { workspaceKey: settings.workspaceKey, log, progress: this.progress });
    this.made.set(name, { key, backend });
    return backend;
  }
}
