/** A program and its argv, as data. Backends build these; the runner executes them. */
export interface Command {
  readonly command: string;
  readonly args: readonly string[];
}
