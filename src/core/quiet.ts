// "When this stream has gone quiet": runs a callback once a readable stream has sent nothing for a
// while, or at a deadline at the latest. The Screen viewer stops reading a hidden viewer's relay
// with it (src/screenWebview.ts), once the webview's RFB pause has let what was in flight drain.
import type { Readable } from 'node:stream';

/**
 * Runs `run` once, when `source` has emitted no data for `quietMs`, or `maxMs` after the call,
 * whichever comes first. The returned function cancels it (and is harmless after it ran). Only
 * listens; it never changes whether the stream flows.
 */
export function whenQuiet(source: Readable | undefined, quietMs: number, maxMs: number, run: () => void): () => void {
  let quiet: NodeJS.Timeout | undefined;
  let done = false;
  const finish = (): void => {
    cancel();
    run();
  };
  const onData = (): void => {
    clearTimeout(quiet);
    quiet = setTimeout(finish, quietMs);
  };
  const deadline = setTimeout(finish, maxMs);
  const cancel = (): void => {
    if (!done) {
      done = true;
      clearTimeout(quiet);
      clearTimeout(deadline);
      source?.off('data', onData);
    }
  };
  source?.on('data', onData);
  onData();
  return cancel;
}
