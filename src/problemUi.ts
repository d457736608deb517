/**
 * Problems shown to the user with the buttons that fix them (the table is src/fixes.ts), and
 * what each button does: open the settings editor at the exact setting, run the action again,
 * build the image, read how to start Docker, allow the screen on this machine, show the log.
 */
import * as vscode from 'vscode';
import type { Logger } from './core/logger';
import { problemOf, type Problem } from './core/problem';
import type { Ctx } from './ctx';
import { BUILD_IMAGE_COMMAND, INSTALL_DOCKER_URL, START_DOCKER_URL, fixesFor, fixLabel, type Fix } from './fixes';
import { fixStrings, hostName, hostPlace, problemMessage } from './messages';

export interface FixContext {
  readonly log: vscode.LogOutputChannel;
  /** This extension's package.json: the scope of each setting it contributes. */
  readonly manifest: unknown;
  /** The command Retry runs: the action that failed. */
  readonly retryCommand?: string;
}

/** Runs a command's action; a failure becomes a notification whose buttons fix it (Retry runs `retryCommand`). */
export async function report(ctx: Ctx, action: () => Promise<unknown>, retryCommand: string): Promise<void> {
  try {
    await action();
  } catch (err) {
    const problem = problemOf(err, retryCommand);
    await showProblem({ log: ctx.log, manifest: ctx.extension.extension.packageJSON, retryCommand }, problem);
  }
}

/** The problem as an error notification with its fixes as buttons; runs the one chosen. */
export async function showProblem(context: FixContext, problem: Problem): Promise<void> {
  if (problem.code === 'needsConsent' && problem.declined) {
    // The person just said no in the modal: nothing to report back to them.
    context.log.info(`not confirmed: ${problem.question.kind}`);
    return;
  }
  const message = problemMessage(problem);
  context.log.error(message);
  const strings = fixStrings();
  const fixes = fixesFor(problem);
  const labels = fixes.map((fix) => fixLabel(fix, strings));
  const choice = await vscode.window.showErrorMessage(message, ...labels);
  const chosen = choice === undefined ? undefined : fixes[labels.indexOf(choice)];
  if (chosen) {
    await applyFix(context, chosen);
  }
}

export async function applyFix(context: FixContext, fix: Fix): Promise<void> {
  switch (fix.kind) {
    case 'openSettings':
      // In a remote window the User tab leaves out machine-scoped settings (the CLI paths):
      // those are edited in the Remote tab, which is where the filter must land.
      if (vscode.env.remoteName && isMachineScoped(context.manifest, fix.setting)) {
        await vscode.commands.executeCommand('workbench.action.openRemoteSettings', { query: `@id:${fix.setting}` });
      } else {
        await vscode.commands.executeCommand('workbench.action.openSettings', `@id:${fix.setting}`);
      }
      return;
    case 'retry':
      await vscode.commands.executeCommand(context.retryCommand ?? 'botScreen.start');
      return;
    case 'buildImage':
      await vscode.commands.executeCommand(BUILD_IMAGE_COMMAND);
      return;
    case 'startDocker':
      await vscode.env.openExternal(vscode.Uri.parse(START_DOCKER_URL));
      return;
    case 'installDocker':
      await vscode.env.openExternal(vscode.Uri.parse(INSTALL_DOCKER_URL));
      return;
    case 'allowHost':
      await allowOnThisMachine(context.log);
      return;
    case 'installHostDesktop':
      await vscode.commands.executeCommand('botScreen.installHostDesktop');
      return;
    case 'manageTrust':
      await vscode.commands.executeCommand('workbench.trust.manage');
      return;
    case 'showLogs':
      context.log.show(true);
      return;
  }
}

function isMachineScoped(manifest: unknown, setting: string): boolean {
  const configuration = (manifest as { contributes?: { configuration?: unknown } } | undefined)?.contributes?.configuration;
  const sections = (Array.isArray(configuration) ? configuration : [configuration]) as Array<{ properties?: Record<string, { scope?: string }> } | undefined>;
  const scope = sections.map((section) => section?.properties?.[setting]?.scope).find((value) => value !== undefined);
  return scope === 'machine' || scope === 'machine-overridable';
}

/**
 * The explicit opt-in to a screen outside the sandbox: a modal says what it means, and only
 * its Allow button writes `botScreen.placement: gateway`, to the user settings (a workspace
 * must never decide what runs on the user's machine).
 */
export async function allowOnThisMachine(log: Logger): Promise<boolean> {
  const allow = vscode.l10n.t('Allow');
  const choice = await vscode.window.showWarningMessage(
    vscode.l10n.t('Run the screen {0}, outside the sandbox?', hostPlace()),
    {
      modal: true,
      detail: vscode.l10n.t(
        'The desktop and its browser will run {0} as you, not inside the agent\'s sandbox: what the agent does on the screen can reach your files and network there. This writes "botScreen.placement": "gateway" to your user settings; set it back to "auto" to undo.',
        hostPlace(),
      ),
    },
    allow,
  );
  if (choice !== allow) {
    return false;
  }
  await vscode.workspace.getConfiguration('botScreen').update('placement', 'gateway', vscode.ConfigurationTarget.Global);
  log.info(`botScreen.placement set to gateway in the user settings: the screen runs on ${hostName()}`);
  // A value in a narrower scope still wins where that scope applies; say so instead of pretending.
  const effective = vscode.workspace.getConfiguration('botScreen').get<string>('placement');
  const start = vscode.l10n.t('Start Screen');
  const answer =
    effective !== 'gateway'
      ? await vscode.window.showWarningMessage(
          vscode.l10n.t('"botScreen.placement" is now "gateway" in your user settings, but a workspace setting of "{0}" still wins in this window.', String(effective)),
        )
      : await vscode.window.showInformationMessage(vscode.l10n.t('The screen may now run {0}.', hostPlace()), start);
  if (answer === start) {
    await vscode.commands.executeCommand('botScreen.start');
  }
  return true;
}
