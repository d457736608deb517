// "When this stream has gone quiet": runs a callback once a readable stream has sent nothing for a
// while, or at a deadline at the latest. The Screen viewer stops reading a hidden viewer's relay
// with it (src/screenWebview.ts), once the webview's RFB pause has let what was in flight drain.
import type { Readable } from 'node:stream';

/**
 * Runs `run` once, when `source` has emitted no data for `quietMs`, or `maxMs` after the call,
 * whichever comes first. The returned function cancels it (and is harmless after it ran). Only
 * listens; it never changes whether the stream flows. A stream its reader paused (a viewer's pump
 * waiting for the webview) is not quiet, only held: the bytes behind the pause would be stale on
 * the reveal (hundreds of kB drawn before the fresh update), so the quiet time starts again until
 * the stream flows and goes quiet, or the deadline.
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
    quiet = setTimeout(() => (source?.isPaused() ? onData() : finish()), quietMs);
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
