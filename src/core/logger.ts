/** What core code needs of a log: the extension passes its LogOutputChannel, tests a console. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}
