// The walkthrough's glue: the Check Runtime command and the context keys that complete its steps.
import * as vscode from 'vscode';
import { probeEngine } from '../core/backends/docker';
import { SANDBOX_IMAGE, imageId } from '../core/sandboxImage';
import type { Ctx } from '../ctx';
import { report } from '../problemUi';
import { engineOf, readSettings } from '../settings';
import type { Command } from './table';

/**
 * The "Get started with Bot Screen" walkthrough's glue. Its steps complete on real events through
 * these context keys (VS Code remembers a completed step itself): the engine answered the check,
 * the default image exists, a person took control and handed it back, an agent used a tool. The
 * Start step uses `botScreen.running`.
 */
export type WalkthroughEvent = 'runtimeReady' | 'imageReady' | 'handedBack' | 'agentUsed';

const marked = new Set<WalkthroughEvent>();

/** Completes a step once; later events of the same kind (every tool call, say) send nothing. */
export function markWalkthrough(event: WalkthroughEvent): void {
  if (!marked.has(event)) {
    marked.add(event);
    void vscode.commands.executeCommand('setContext', `botScreen.walkthrough.${event}`, true);
  }
}

export function walkthroughCommands(ctx: Ctx): Command[] {
  let personHeld = false;
  ctx.register(
    ctx.control.onDidChange(() => {
      if (ctx.control.humanHolds()) {
        personHeld = true;
      } else if (personHeld) {
        markWalkthrough('handedBack');
      }
    }),
  );
  return [{ id: 'botScreen.checkRuntime', run: () => report(ctx, () => checkRuntime(ctx), 'botScreen.checkRuntime') }];
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
  const { cli, engine } = engineOf(settings);
  const version = await probeEngine(cli, engine);
  markWalkthrough('runtimeReady');
  const built = (await imageId(cli, engine, SANDBOX_IMAGE)) !== undefined;
  if (built) {
    markWalkthrough('imageReady');
  }
  ctx.log.info(`${cli} answers: server ${version}; ${SANDBOX_IMAGE} ${built ? 'is present' : 'is not built yet'}`);
  void vscode.window.showInformationMessage(
    built
      ? vscode.l10n.t('{0} {1} answers, and the sandbox image {2} is built. Start the screen next.', cli, version, SANDBOX_IMAGE)
      : vscode.l10n.t('{0} {1} answers. Build the sandbox image next.', cli, version),
  );
}
