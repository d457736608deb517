/**
 * The command table: every command as data, registered in one place. A command says whether it
 * acts on the running screen (`needsScreen`: the screen is started first, through Start, and the
 * command runs only once it runs, given it) and whether it cannot run here at all
 * (`unavailable`: checked before anything starts). Modelled on rust-analyzer's
 * `createCommands()`; each command family file returns its entries from `(ctx) => Command[]`.
 */
import * as vscode from 'vscode';
import type { RunningScreen } from '../core/screen';
import type { Ctx } from '../ctx';

/** The running screen a command acts on. */
export type { RunningScreen };

interface CommandBase {
  readonly id: string;
  /** Why the command cannot run in this environment (shown as an error), or undefined. */
  readonly unavailable?: () => string | undefined;
}

export type Command =
  | (CommandBase & { readonly needsScreen?: false; readonly run: (...args: unknown[]) => unknown })
  | (CommandBase & { readonly needsScreen: true; readonly run: (screen: RunningScreen, ...args: unknown[]) => unknown });

/** A command family: its commands, and whatever they share set up for this context. */
type CommandFamily = (ctx: Ctx) => readonly Command[];

export function registerCommands(ctx: Ctx, families: readonly CommandFamily[]): void {
  for (const command of families.flatMap((family) => family(ctx))) {
    ctx.register(vscode.commands.registerCommand(command.id, (...args: unknown[]) => invoke(ctx, command, args)));
  }
}

async function invoke(ctx: Ctx, command: Command, args: unknown[]): Promise<unknown> {
  const refusal = command.unavailable?.();
  if (refusal !== undefined) {
    void vscode.window.showErrorMessage(refusal);
    return undefined;
  }
  if (!command.needsScreen) {
    return command.run(...args);
  }
  const screen = await runningScreen(ctx);
  return screen ? command.run(screen, ...args) : undefined;
}

/**
 * The running screen, started first (through the Start command, so errors are reported the same
 * way) when it is not running. Undefined when it could not start.
 */
export async function runningScreen(ctx: Ctx): Promise<RunningScreen | undefined> {
  if (ctx.controller.status.state !== 'running') {
    await vscode.commands.executeCommand('botScreen.start');
  }
  return ctx.controller.runningSandbox();
}
