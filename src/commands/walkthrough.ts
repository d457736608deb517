import * as vscode from 'vscode';
import { probeEngine } from '../core/backends/docker';
import { ScreenError, type Problem } from '../core/problem';
import { run } from '../core/runner';
import { SANDBOX_IMAGE } from '../core/sandboxImage';
import type { Ctx } from '../ctx';
import { showProblem } from '../problemUi';
import { readSettings } from '../settings';

/**
 * The "Get started with Bot Screen" walkthrough's glue. Its steps complete on real events through
 * these context keys (VS Code remembers a completed step itself): the engine answered the check,
 * the default image exists, a person took control and handed it back, an agent used a tool. The
 * Start step uses `botScreen.running`.
 */
export type WalkthroughEvent = 'runtimeReady' | 'imageReady' | 'handedBack' | 'agentUsed';

export function markWalkthrough(event: WalkthroughEvent): void {
  void vscode.commands.executeCommand('setContext', `botScreen.walkthrough.${event}`, true);
}

export function registerWalkthrough(ctx: Ctx): void {
  ctx.registerCommand('botScreen.checkRuntime', async () => {
    try {
      await checkRuntime(ctx);
    } catch (err) {
      // What is missing (the CLI, the daemon), with the buttons that fix it.
      const problem: Problem = err instanceof ScreenError ? err.problem : { code: 'commandFailed', what: 'the engine check', detail: String(err) };
      await showProblem({ log: ctx.log, manifest: ctx.extension.extension.packageJSON, retryCommand: 'botScreen.checkRuntime' }, problem);
    }
  });
  let personHeld = false;
  ctx.own(
    ctx.control.onDidChange(() => {
      if (ctx.control.humanHolds()) {
        personHeld = true;
      } else if (personHeld) {
        markWalkthrough('handedBack');
      }
    }),
  );
}

/** The walkthrough's first step: does the engine of the chosen backend answer, and is the image there? */
async function checkRuntime(ctx: Ctx): Promise<void> {
  const settings = readSettings(ctx.log);
  if (settings.backend !== 'docker' && settings.backend !== 'podman') {
    markWalkthrough('runtimeReady');
    void vscode.window.showInformationMessage(
      vscode.l10n.t('The sandbox backend is {0} ("botScreen.sandbox.backend"), which needs neither Docker nor Podman. Start the screen to check that backend.', settings.backendRaw),
    );
    return;
  }
  const cli = settings.backend === 'podman' ? settings.podman.cli : settings.docker.cli;
  const version = await probeEngine(cli, settings.backend);
  markWalkthrough('runtimeReady');
  const image = await run({ command: cli, args: ['image', 'inspect', '--format', '{{.Id}}', '--', SANDBOX_IMAGE] }, { timeoutMs: 30_000 });
  if (image.exitCode === 0) {
    markWalkthrough('imageReady');
  }
  ctx.log.info(`${cli} answers: server ${version}; ${SANDBOX_IMAGE} ${image.exitCode === 0 ? 'is present' : 'is not built yet'}`);
  void vscode.window.showInformationMessage(
    image.exitCode === 0
      ? vscode.l10n.t('{0} {1} answers, and the sandbox image {2} is built. Start the screen next.', cli, version, SANDBOX_IMAGE)
      : vscode.l10n.t('{0} {1} answers. Build the sandbox image next.', cli, version),
  );
}
