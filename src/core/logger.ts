/** What core code needs of a log: the extension passes its LogOutputChannel, tests a console. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /**
   * A long step the user should see happen (pulling an image): the extension shows it as a
   * progress notification until the operation ends.
   */
  progress?(step: ProgressStep): void;
}

/** The long steps there are, as data: the extension words them. */
export type ProgressStep = { readonly kind: 'pullingImage'; readonly image: string };
