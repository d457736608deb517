/**
 * Where the screen lives. The screen must live where the agent's terminal lives; a backend that
 * cannot host one is refused (never silently moved to this machine). Decision table:
 *
 * | backend                      | auto     | terminal | gateway |
 * |------------------------------|----------|----------|---------|
 * | local                        | host     | host     | host    |
 * | docker, podman, ssh,         | sandbox  | sandbox  | host    |
 * | apptainer, kubernetes        |          |          |         |
 * | modal, daytona, vercel       | refused  | refused  | host    |
 */

export const PLACEMENT_SETTINGS = ['auto', 'terminal', 'gateway'] as const;
export type PlacementSetting = (typeof PLACEMENT_SETTINGS)[number];

/** Backends whose CLI can run a command inside the sandbox with stdio kept open. */
export const EXEC_BACKENDS = ['docker', 'podman', 'ssh', 'apptainer', 'kubernetes'] as const;
/** Backends reached only through an SDK: no exec stream, so no screen inside them. */
export const SDK_BACKENDS = ['modal', 'daytona', 'vercel'] as const;
export const BACKENDS = ['local', ...EXEC_BACKENDS, ...SDK_BACKENDS] as const;
export type BackendName = (typeof BACKENDS)[number];
export type ExecBackend = (typeof EXEC_BACKENDS)[number];

export type Placement =
  | { readonly where: 'host'; readonly backend: BackendName; readonly why: 'localBackend' | 'gatewayOptIn' }
  | { readonly where: 'sandbox'; readonly backend: ExecBackend }
  | { readonly where: 'refused'; readonly backend: BackendName };

export interface Parsed<T> {
  readonly value: T;
  /** The raw value when it was not recognised (the caller logs a warning). */
  readonly unknown?: string;
}

export function parsePlacementSetting(raw: unknown): Parsed<PlacementSetting> {
  const text = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  if ((PLACEMENT_SETTINGS as readonly string[]).includes(text)) {
    return { value: text as PlacementSetting };
  }
  return raw === undefined || raw === '' ? { value: 'auto' } : { value: 'auto', unknown: String(raw) };
}

/** An unknown backend name stays unknown: it cannot be placed anywhere but is refused. */
export function parseBackend(raw: unknown): Parsed<BackendName | undefined> {
  const text = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  const alias = text === 'singularity' ? 'apptainer' : text === 'vercel_sandbox' ? 'vercel' : text;
  if ((BACKENDS as readonly string[]).includes(alias)) {
    return { value: alias as BackendName };
  }
  return { value: undefined, unknown: String(raw) };
}

export function isExecBackend(backend: string): backend is ExecBackend {
  return (EXEC_BACKENDS as readonly string[]).includes(backend);
}

export function resolvePlacement(backend: BackendName, setting: PlacementSetting): Placement {
  if (backend === 'local') {
    return { where: 'host', backend, why: 'localBackend' };
  }
  if (setting === 'gateway') {
    return { where: 'host', backend, why: 'gatewayOptIn' };
  }
  if (isExecBackend(backend)) {
    return { where: 'sandbox', backend };
  }
  return { where: 'refused', backend };
}

/** Short label for status surfaces: `gateway` or `terminal:<backend>` (or `refused:<backend>`). */
export function placementLabel(placement: Placement): string {
  switch (placement.where) {
    case 'host':
      return 'gateway';
    case 'sandbox':
      return `terminal:${placement.backend}`;
    case 'refused':
      return `refused:${placement.backend}`;
  }
}
