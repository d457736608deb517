// The VS Code that scripts/run.sh serves, shared with the test that attacks it
// (test/ui/run-serve.test.mjs): a VS Code Server on 127.0.0.1 that asks every request for a
// connection token (other users of this machine get 403, not the server's terminal), with
// workspace trust on, Bot Screen installed, and the screen set to start in the Docker sandbox.
import { startServer, workbenchUrl } from '../test/ui/harness.mjs';

/**
 * The sandbox and autoStart are user settings, not the workspace's: a workspace must not decide
 * what runs on this machine, and VS Code asks before it trusts the (throwaway) folder.
 */
// Workspace trust stays on here, whatever the test harness's defaults say.
export const RUN_USER_SETTINGS = { 'botScreen.sandbox.backend': 'docker', 'botScreen.autoStart': true, 'security.workspace.trust.enabled': true };

/** @returns {Promise<{ server: Awaited<ReturnType<typeof startServer>>, url: string }>} url carries `?tkn=`. */
export async function serveForRun({ vsixPath }) {
  const server = await startServer({ vsixPath, connectionToken: true, userSettings: RUN_USER_SETTINGS });
  return { server, url: workbenchUrl(server) };
}
