import RELAY_SOURCE from './relay.py';
import type { Command } from './command';
import type { Sandbox } from './sandbox';

export { RELAY_SOURCE };

/** The in-sandbox relay between the exec stream's stdio and the screen's unix socket. */
export function rfbRelayCommand(sandbox: Sandbox, socketPath: string): Command {
  return sandbox.exec(['python3', '-c', RELAY_SOURCE, socketPath], { interactive: true });
}
