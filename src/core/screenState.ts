/**
 * The screen's states and the moves between them: the one table the controller checks every
 * status change against (ScreenController.transition). The webview protocol re-exports the
 * state names, so core never imports the protocol.
 */

/** Where the screen is and what it is doing, as the view shows it. */
export type ScreenState = 'stopped' | 'starting' | 'running' | 'stopping' | 'gone' | 'refused' | 'blocked' | 'error';

const ALL: readonly ScreenState[] = ['stopped', 'starting', 'running', 'stopping', 'gone', 'refused', 'blocked', 'error'];

/**
 * Legal moves. A settled state (stopped, running, gone, refused, blocked, error) may go anywhere:
 * every operation first checks the recorded sandbox (gone, unknown) and refuses early. The two
 * states of an operation in flight end only the way that operation can end: a start ends running,
 * stopped (a question not answered), or with its problem; a stop ends stopped or in an error.
 * Staying in a state (a new problem, an image question) is always legal.
 */
const MOVES: Readonly<Record<ScreenState, readonly ScreenState[]>> = {
  stopped: ALL,
  running: ALL,
  gone: ALL,
  refused: ALL,
  blocked: ALL,
  error: ALL,
  starting: ['starting', 'running', 'stopped', 'refused', 'blocked', 'gone', 'error'],
  stopping: ['stopping', 'stopped', 'error'],
};

export function isLegalMove(from: ScreenState, to: ScreenState): boolean {
  return MOVES[from].includes(to);
}
