import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxIdentity } from './backends/backend';
import type { Placement } from './placement';

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
  constructor(private readonly dir: string) {}

  path(workspaceKey: string): string {
    return join(this.dir, `${workspaceKey}.json`);
  }

  /** Tolerant: a BOM is skipped; a missing, unreadable or malformed file is "no marker". */
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
      return isMarker(value, workspaceKey) ? { marker: value } : { marker: undefined, problem: 'not a Bot Screen marker' };
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

function isMarker(value: unknown, workspaceKey: string): value is Marker {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const m = value as Record<string, unknown>;
  const sandbox = m.sandbox as Record<string, unknown> | undefined;
  return (
    m.version === 1 &&
    m.workspaceKey === workspaceKey &&
    isPlacement(m.placement) &&
    typeof sandbox === 'object' &&
    sandbox !== null &&
    typeof sandbox.backend === 'string' &&
    typeof sandbox.id === 'string' &&
    typeof sandbox.name === 'string' &&
    typeof m.display === 'string' &&
    typeof m.socket === 'string' &&
    typeof m.pid === 'number'
  );
}

function isPlacement(value: unknown): value is Placement {
  const p = value as Record<string, unknown> | null;
  return typeof p === 'object' && p !== null && typeof p.backend === 'string' && (p.where === 'host' || p.where === 'sandbox');
}
