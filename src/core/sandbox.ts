// The Sandbox: a place that can run argv (this machine, or inside a sandbox), as a backend hands it over.
import type { Command } from './command';
import type { BackendName } from './placement';

/**
 * A place that can run argv: this machine or the inside of a sandbox. `exec` returns the local
 * command that runs `argv` there as the desktop user, with stdin kept open when `interactive`.
 */
export interface Sandbox {
  readonly backend: BackendName;
  /** Stable identity: a container id, or `host` for this machine. */
  readonly id: string;
  /** Human name for logs and the view: a container name, or `this machine`. */
  readonly name: string;
  readonly onHost: boolean;
  exec(argv: readonly string[], options: { readonly interactive: boolean }): Command;
  /**
   * An interactive login shell in the sandbox with a terminal (the one place a tty is right),
   * the given environment set. Absent where the backend has no way to open one.
   */
  terminal?(env: Readonly<Record<string, string>>): Command;
}

/** This machine: argv runs as is, as the user running VS Code. */
export function hostSandbox(backend: BackendName): Sandbox {
  return {
    backend,
    id: 'host',
    name: 'host',
    onHost: true,
    exec: (argv) => ({ command: argv[0], args: argv.slice(1) }),
    terminal: (env) => ({ command: 'env', args: [...Object.entries(env).map(([k, v]) => `${k}=${v}`), process.env.SHELL || 'bash', '-l'] }),
  };
}
