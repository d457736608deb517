// The browser command family: Open Browser on Screen and Copy DevTools URL (a forward of the sandbox's DevTools port).
import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { DEVTOOLS_PORT, openBrowserArgv } from '../core/actions/chromium';
import { withEnv } from '../core/actions/sessionExec';
import { failureDetail } from '../core/failure';
import { refusalLog, supported, type Refusal } from '../core/loopbackGuard';
import { run } from '../core/runner';
import type { Command, RunningScreen } from './table';

/**
 * "Open Browser on Screen" starts the sandbox's Chromium on the screen (as the desktop user, its
 * profile in that user's home, DevTools on the sandbox's loopback); "Copy DevTools URL" forwards
 * that DevTools port to 127.0.0.1 here through exec streams, for Playwright and agent tooling.
 * Only this user's processes may connect to the forward (DevTools is full control of that
 * browser; see core/loopbackGuard.ts). The forward is the context's (`ctx.forwards`), which
 * closes it when the screen stops or the window closes.
 */
export function browserCommands(ctx: Ctx): Command[] {
  const onRefused = refusalLog(ctx.log, 'DevTools forward');
  return [
    { id: 'botScreen.openBrowser', needsScreen: true, run: (target) => openBrowser(ctx, target) },
    {
      id: 'botScreen.copyDevToolsUrl',
      needsScreen: true,
      unavailable: () =>
        supported()
          ? undefined
          : vscode.l10n.t('Bot Screen can limit a loopback port to your own user only on Linux, so it does not forward DevTools on {0}.', process.platform),
      run: (target) => copyDevToolsUrl(ctx, target, onRefused),
    },
  ];
}

async function openBrowser(ctx: Ctx, target: RunningScreen): Promise<void> {
  const result = await run(target.sandbox.exec(withEnv(target.screen.env, openBrowserArgv()), { interactive: false }), { timeoutMs: 20_000 });
  if (result.exitCode !== 0) {
    const detail = failureDetail(result);
    ctx.log.error(`opening the browser failed: ${detail}`);
    void vscode.window.showErrorMessage(vscode.l10n.t('Could not open the browser on the screen: {0}', detail));
    return;
  }
  ctx.controller.noteActivity();
  ctx.log.info(`opened Chromium on the screen in ${target.sandbox.name}`);
}

async function copyDevToolsUrl(ctx: Ctx, target: RunningScreen, onRefused: (reason: Refusal, detail: string) => void): Promise<void> {
  const port = await ctx.forwards.forward(target.sandbox, DEVTOOLS_PORT, undefined, { onRefused });
  const local = `http://127.0.0.1:${port}`;
  // The port listens where the extension host runs; on a remote, VS Code forwards it to the
  // user's side and the address the user gets is that one.
  const url = (await vscode.env.asExternalUri(vscode.Uri.parse(local))).toString(true).replace(/\/$/, '');
  await vscode.env.clipboard.writeText(url);
  ctx.log.info(`DevTools of the sandbox browser forwarded to ${local}${url === local ? '' : `, reachable as ${url}`}`);
  const reachable = await fetch(`${local}/json/version`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.ok, () => false);
  if (reachable) {
    void vscode.window.showInformationMessage(vscode.l10n.t('DevTools of the sandbox browser: {0} (copied; only your user on this machine can connect).', url));
    return;
  }
  const open = vscode.l10n.t('Open Browser on Screen');
  const choice = await vscode.window.showWarningMessage(
    vscode.l10n.t('{0} (copied) forwards to the sandbox browser\'s DevTools port, but no browser answers there yet.', url),
    open,
  );
  if (choice === open) {
    await vscode.commands.executeCommand('botScreen.openBrowser');
  }
}
