// The sandbox image command family: Build Sandbox Image, and the Switch / Keep answers to an image change.
import * as vscode from 'vscode';
import { ScreenError } from '../core/problem';
import { SANDBOX_CONTEXT_HASH, SANDBOX_IMAGE, imageId, isOwnImage, startBuild, type BuildResult } from '../core/sandboxImage';
import { isValidImage } from '../core/validate';
import type { Ctx } from '../ctx';
import { BUILD_IMAGE_COMMAND } from '../fixes';
import { imageBuildCost } from '../messages';
import { engineOf, pinImage, readImageBuildSettings, readSettings } from '../settings';
import { report } from '../problemUi';
import { askPerson } from '../trust';
import type { Command } from './table';
import { markWalkthrough } from './walkthrough';

/**
 * The sandbox image: Build Sandbox Image (the default image is built here from the context the
 * VSIX ships, never pulled), the build question a Start or an agent meets when it is missing, and
 * Switch image / Keep current image, the two answers to a pending default-image change. Switch and
 * Keep pin an image, which ends the question; nothing headless ever answers it.
 */
export function imageCommands(ctx: Ctx): Command[] {
  return [
    { id: 'botScreen.switchImage', run: () => switchImage(ctx) },
    { id: 'botScreen.keepImage', run: () => keepImage(ctx) },
    { id: BUILD_IMAGE_COMMAND, run: () => buildImageCommand(ctx) },
  ];
}

/** Start, building the default image first when the user agrees to. */
export async function startScreen(ctx: Ctx): Promise<void> {
  try {
    await ctx.controller.start(askPerson);
  } catch (err) {
    if (!(err instanceof ScreenError && err.problem.code === 'imageMissing' && err.problem.buildable)) {
      throw err;
    }
    if (await askToBuild(ctx, true)) {
      await ctx.controller.start(askPerson);
    }
  }
}

/**
 * An agent's start met the missing image: the user is asked (once, without blocking the agent,
 * which gets a sentence telling it to ask the user).
 */
export function offerBuildForAgent(ctx: Ctx): void {
  void askToBuild(ctx, false);
}

let question: Promise<boolean> | undefined;

/** One build question at a time; resolves true once the image was built. */
function askToBuild(ctx: Ctx, modal: boolean): Promise<boolean> {
  question ??= (async () => {
    const build = vscode.l10n.t('Build Image');
    const message = vscode.l10n.t('The sandbox image {0} is not built yet. Build it now?', SANDBOX_IMAGE);
    const detail = vscode.l10n.t('Bot Screen builds its desktop image (Debian, TigerVNC, Xfce, Chromium) on this machine: {0}.', imageBuildCost());
    const answer = modal
      ? await vscode.window.showInformationMessage(message, { modal: true, detail }, build)
      : await vscode.window.showInformationMessage(`${message} ${detail}`, build);
    return answer === build && (await buildSandboxImage(ctx, false));
  })().finally(() => {
    question = undefined;
  });
  return question;
}

async function buildImageCommand(ctx: Ctx): Promise<void> {
  const cached = { label: vscode.l10n.t('Build'), detail: vscode.l10n.t('Reuses the steps Docker has cached; fast when the recipe did not change') };
  const fresh = { label: vscode.l10n.t('Build without cache'), detail: vscode.l10n.t('Runs every step again: fetches current Debian packages ({0})', imageBuildCost()) };
  const choice = await vscode.window.showQuickPick([cached, fresh], { title: vscode.l10n.t('Build the sandbox image {0}', SANDBOX_IMAGE) });
  if (choice) {
    await buildSandboxImage(ctx, choice === fresh);
  }
}

let building: Promise<boolean> | undefined;

/**
 * Builds the default image with a cancellable notification showing the current step; the whole
 * output goes to the log. One build at a time: a second request joins the running one.
 */
export function buildSandboxImage(ctx: Ctx, noCache: boolean): Promise<boolean> {
  // The status bar spins while the build runs, like a start.
  building ??= Promise.resolve(ctx.statusBar.whileBusy(runBuild(ctx, noCache))).finally(() => {
    building = undefined;
  });
  return building;
}

async function runBuild(ctx: Ctx, noCache: boolean): Promise<boolean> {
  const { cli, engine } = engineOf(readSettings(ctx.log));
  const image = readImageBuildSettings();
  if (!isValidImage(image.base)) {
    void vscode.window.showErrorMessage(vscode.l10n.t('"{0}" is not a valid image name (check "botScreen.sandbox.image.base"). Nothing was built.', image.base));
    return false;
  }
  const contextDir = vscode.Uri.joinPath(ctx.extension.extensionUri, 'sandbox').fsPath;
  ctx.log.info(`building ${SANDBOX_IMAGE} with ${cli} FROM ${image.base}${noCache ? ' without cache' : ''} (context ${contextDir})`);
  const started = Date.now();
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Building the sandbox image'), cancellable: true },
    (progress, token): Promise<BuildResult> => {
      progress.report({ message: vscode.l10n.t('starting {0} build…', cli) });
      const handle = startBuild({
        cli,
        flavour: engine,
        contextDir,
        tag: SANDBOX_IMAGE,
        contextHash: SANDBOX_CONTEXT_HASH,
        ...image,
        noCache,
        onLine: (line) => ctx.log.info(`build: ${line}`),
        onStep: (step) => progress.report({ message: vscode.l10n.t('Step {0}/{1}: {2}', step.step, step.total, shorten(step.instruction, 90)) }),
      });
      const cancel = token.onCancellationRequested(() => {
        ctx.log.info('build: cancelled by the user');
        handle.cancel();
      });
      return handle.done.finally(() => cancel.dispose());
    },
  );
  const seconds = Math.round((Date.now() - started) / 1000);
  switch (result.status) {
    case 'built':
      ctx.log.info(`built ${SANDBOX_IMAGE} (${result.imageId}) in ${seconds} s`);
      markWalkthrough('imageReady');
      void vscode.window.showInformationMessage(vscode.l10n.t('The sandbox image {0} is built.', SANDBOX_IMAGE));
      return true;
    case 'cancelled':
      ctx.log.info(`the build of ${SANDBOX_IMAGE} was cancelled after ${seconds} s; nothing was tagged`);
      return false;
    case 'failed': {
      ctx.log.error(`the build of ${SANDBOX_IMAGE} failed (exit ${result.exitCode ?? 'none'}) after ${seconds} s`);
      const showLogs = vscode.l10n.t('Show Logs');
      const tail = result.lastLines.slice(-6).join('\n');
      const answer = await vscode.window.showErrorMessage(vscode.l10n.t('Building the sandbox image failed:\n{0}', tail), showLogs);
      if (answer === showLogs) {
        ctx.log.show(true);
      }
      return false;
    }
  }
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function pending(ctx: Ctx) {
  const imageSwitch = ctx.controller.status.imageSwitch;
  if (!imageSwitch) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No sandbox image switch is pending for this workspace.'));
  }
  return imageSwitch;
}

async function keepImage(ctx: Ctx): Promise<void> {
  const imageSwitch = pending(ctx);
  if (imageSwitch) {
    await pinImage(imageSwitch.current);
    ctx.log.info(`kept the sandbox image ${imageSwitch.current} (pinned)`);
    await ctx.controller.attach();
  }
}

async function switchImage(ctx: Ctx): Promise<void> {
  const imageSwitch = pending(ctx);
  if (!imageSwitch) {
    return;
  }
  // Our own image is built first; while it does not exist nothing is pinned or replaced, so the
  // old container stays exactly as it is.
  if (isOwnImage(imageSwitch.target) && !(await imageExists(ctx, imageSwitch.target))) {
    if (imageSwitch.target !== SANDBOX_IMAGE || !(await buildSandboxImage(ctx, false))) {
      return;
    }
  }
  await pinImage(imageSwitch.target);
  ctx.log.info(`switching the sandbox to ${imageSwitch.target} (pinned)`);
  // The progress ends before a failure is shown with its fixes.
  await report(
    ctx,
    () =>
      Promise.resolve(
        vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('Switching the sandbox to {0}…', imageSwitch.target) },
          async () => {
            // The pinned image differs from the container's, so the start makes sure the new image
            // exists (pulling it if needed) before it replaces the old container.
            await ctx.controller.stop();
            await ctx.controller.start(askPerson);
          },
        ),
      ),
    'botScreen.switchImage',
  );
}

async function imageExists(ctx: Ctx, image: string): Promise<boolean> {
  const { cli, engine } = engineOf(readSettings(ctx.log));
  return (await imageId(cli, engine, image)) !== undefined;
}
