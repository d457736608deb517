// The launcher's commands (bootstrap + launcher.sh on stdin) for each mode, and parsers of what it prints.
import BOOTSTRAP from './bootstrap.sh';
import LAUNCHER_SCRIPT from './launcher.sh';
import type { Command } from './command';
import type { Sandbox } from './sandbox';

export { LAUNCHER_SCRIPT };

export type LauncherMode =
  | { readonly mode: 'start'; readonly geometry: string; readonly timeoutSeconds: number }
  | { readonly mode: 'stop' }
  | { readonly mode: 'status' };

/** The command plus the stdin (the script) that runs one launcher mode in a sandbox. */
export function launcherCommand(sandbox: Sandbox, key: string, request: LauncherMode): { command: Command; input: string } {
  const extra = request.mode === 'start' ? [request.geometry, String(request.timeoutSeconds)] : [];
  const argv = ['bash', '-c', BOOTSTRAP, 'botscreen', key, request.mode, ...extra];
  return { command: sandbox.exec(argv, { interactive: true }), input: LAUNCHER_SCRIPT };
}

/** What a live screen publishes. */
export interface PublishedScreen {
  readonly display: string;
  readonly pid: number;
  readonly socket: string;
  readonly runtimeDir: string;
  readonly geometry: string;
  readonly adopted: boolean;
  /** The session env (DISPLAY, XAUTHORITY, DBUS_SESSION_BUS_ADDRESS, XDG_*). */
  readonly env: Readonly<Record<string, string>>;
}

export function parseKeyValues(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0 && /^[A-Z_][A-Z0-9_]*$/.test(line.slice(0, eq))) {
      out[line.slice(0, eq)] = line.slice(eq + 1).trim();
    }
  }
  return out;
}

export function parsePublished(stdout: string): PublishedScreen | undefined {
  const values = parseKeyValues(stdout);
  const pid = Number(values.BOTSCREEN_PID);
  if (!values.DISPLAY || !values.BOTSCREEN_SOCKET || !Number.isInteger(pid) || pid <= 0) {
    return undefined;
  }
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    if (!name.startsWith('BOTSCREEN_')) {
      env[name] = value;
    }
  }
  return {
    display: values.DISPLAY,
    pid,
    socket: values.BOTSCREEN_SOCKET,
    runtimeDir: values.BOTSCREEN_RUNTIME_DIR ?? '',
    geometry: values.BOTSCREEN_GEOMETRY ?? '',
    adopted: values.BOTSCREEN_ADOPTED === '1',
    env,
  };
}

export const EXIT_MISSING_BINARIES = 3;
export const EXIT_START_TIMEOUT = 4;

export function parseMissing(stdout: string): string[] {
  return (parseKeyValues(stdout).BOTSCREEN_MISSING ?? '').split(/\s+/).filter(Boolean);
}
