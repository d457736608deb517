import * as vscode from 'vscode';
import { registerScreenCommands } from './commands/screen';
import { Ctx } from './ctx';

let ctx: Ctx | undefined;

export function activate(context: vscode.ExtensionContext): void {
  ctx = new Ctx(context);
  registerScreenCommands(ctx);
  // A screen that outlived a window reload is found again; nothing is created here.
  void ctx.controller.attach();
}

export function deactivate(): void {
  ctx?.dispose();
  ctx = undefined;
}
