/**
 * The screen marker: the file a running screen leaves on disk, and the checks it passes before
 * anything acts on it.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxIdentity } from './backends/backend';
import { isBackendIdentity } from './backends/registry';
import { BACKENDS, isExecBackend, type Placement } from './placement';

/**
 * What a running screen leaves on disk so that a reload or a restart finds it again, and so that
 * status and stop act on the sandbox that really hosts it even after the settings changed.
 * Written only by a start or an adoption; removed by stop or when the sandbox is proven gone.
 */
export interface Marker {
  readonly version: 1;
  readonly workspaceKey: string;
  readonly placement: Placement;
  readonly sandbox: SandboxIdentity;
  readonly display: string;
  readonly runtimeDir: string;
  readonly socket: string;
  readonly pid: number;
  readonly geometry: string;
  readonly startedAt: string;
}

export type MarkerRead = { readonly marker: Marker } | { readonly marker: undefined; readonly problem?: string };

export class MarkerStore {
  constructor(readonly dir: string) {}

  path(workspaceKey: string): string {
    return join(this.dir, `${workspaceKey}.json`);
  }

  /**
   * Tolerant: a BOM is skipped; a missing, unreadable, malformed or garbled file is "no marker",
   * with the problem for the log.
   */
  read(workspaceKey: string): MarkerRead {
    let text: string;
    try {
      text = readFileSync(this.path(workspaceKey), 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === 'ENOENT' ? { marker: undefined } : { marker: undefined, problem: `unreadable: ${code ?? String(err)}` };
    }
    try {
      const value: unknown = JSON.parse(text.replace(/^\uFEFF/, ''));
      const problem = markerProblem(value, workspaceKey);
      return problem === undefined ? { marker: value as Marker } : { marker: undefined, problem: `not a usable Bot Screen marker: ${problem}` };
    } catch {
      return { marker: undefined, problem: 'not JSON' };
    }
  }

  /** Atomic (write a temporary file, rename), mode 0600 in a 0700 directory. */
  write(marker: Marker): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const target = this.path(marker.workspaceKey);
    const temporary = `${target}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(marker, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, target);
  }

  /** Best effort: a marker that cannot be removed (say, a directory in its place) is left. */
  remove(workspaceKey: string): void {
    try {
      rmSync(this.path(workspaceKey), { force: true });
    } catch {
      // read() already treats whatever is there as "no marker".
    }
  }
}

const MARKER_FIELDS = new Set(['version', 'workspaceKey', 'placement', 'sandbox', 'display', 'runtimeDir', 'socket', 'pid', 'geometry', 'startedAt']);
const SANDBOX_FIELDS = new Set(['backend', 'id', 'name']);
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;

/**
 * Why a parsed file is not a marker this version may act on, or undefined. Every field is checked
 * against what a start writes, because the identity ends up in argv (`docker exec ID`, an ssh
 * destination, an instance name): a file edited by someone else must never turn into an option
 * such as `--privileged`. A field this version does not know rejects the whole marker.
 */
export function markerProblem(value: unknown, workspaceKey: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'not a JSON object';
  }
  const m = value as Record<string, unknown>;
  const unknown = Object.keys(m).find((k) => !MARKER_FIELDS.has(k));
  if (unknown !== undefined) {
    return `unknown field ${JSON.stringify(unknown)}`;
  }
  if (m.version !== 1) {
    return `unknown version ${JSON.stringify(m.version)}`;
  }
  if (m.workspaceKey !== workspaceKey) {
    return 'it belongs to another workspace';
  }
  const placement = placementProblem(m.placement);
  if (placement) {
    return placement;
  }
  const sandbox = identityProblem(m.sandbox, m.placement as Placement);
  if (sandbox) {
    return sandbox;
  }
  if (typeof m.display !== 'string' || !/^:\d{1,5}$/.test(m.display)) {
    return `bad display ${describe(m.display)}`;
  }
  if (!isPath(m.socket, false)) {
    return `bad socket path ${describe(m.socket)}`;
  }
  if (!isPath(m.runtimeDir, true)) {
    return `bad runtime dir ${describe(m.runtimeDir)}`;
  }
  if (typeof m.pid !== 'number' || !Number.isSafeInteger(m.pid) || m.pid <= 0) {
    return `bad pid ${describe(m.pid)}`;
  }
  if (typeof m.geometry !== 'string' || !/^(\d{1,5}x\d{1,5})?$/.test(m.geometry)) {
    return `bad geometry ${describe(m.geometry)}`;
  }
  if (typeof m.startedAt !== 'string' || (m.startedAt !== '' && (m.startedAt.length > 64 || Number.isNaN(Date.parse(m.startedAt))))) {
    return `bad start time ${describe(m.startedAt)}`;
  }
  return undefined;
}

function placementProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) {
    return 'no placement';
  }
  const p = value as Record<string, unknown>;
  if (p.where === 'sandbox' && typeof p.backend === 'string' && isExecBackend(p.backend) && Object.keys(p).length === 2) {
    return undefined;
  }
  if (
    p.where === 'host' &&
    typeof p.backend === 'string' &&
    (BACKENDS as readonly string[]).includes(p.backend) &&
    (p.why === 'localBackend' || p.why === 'gatewayOptIn') &&
    Object.keys(p).length === 3
  ) {
    return undefined;
  }
  return `bad placement ${describe(value)}`;
}

/** The recorded sandbox, in the form its backend gives its sandboxes (checked per backend). */
function identityProblem(value: unknown, placement: Placement): string | undefined {
  if (typeof value !== 'object' || value === null) {
    return 'no sandbox';
  }
  const s = value as Record<string, unknown>;
  const unknown = Object.keys(s).find((k) => !SANDBOX_FIELDS.has(k));
  if (unknown !== undefined) {
    return `unknown sandbox field ${JSON.stringify(unknown)}`;
  }
  const { backend, id, name } = s;
  if (backend !== placement.backend || typeof id !== 'string' || typeof name !== 'string') {
    return `bad sandbox ${describe(value)}`;
  }
  const bad = `bad ${backend} sandbox id ${describe(id)} or name ${describe(name)}`;
  if (placement.where === 'host') {
    return id === 'host' && name === 'host' ? undefined : bad;
  }
  return isExecBackend(placement.backend) && isBackendIdentity(placement.backend, { id, name }) ? undefined : bad;
}

function isPath(value: unknown, mayBeEmpty: boolean): boolean {
  return typeof value === 'string' && ((mayBeEmpty && value === '') || (value.startsWith('/') && value.length <= 4096 && !CONTROL.test(value)));
}

function describe(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}
