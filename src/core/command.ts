/** A program and its argv, as data. Backends build these; the runner executes them. */
export interface Command {
  readonly command: string;
  readonly args: readonly string[];
}

export function commandLine(cmd: Command): string {
  return [cmd.command, ...cmd.args].map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : JSON.stringify(word))).join(' ');
}
