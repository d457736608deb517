/**
 * What every agent tool shares: the base class each tool in this folder extends (its action kind
 * and its messages: the chat's progress line, the question before it acts, the result the model
 * reads), and the one way a tool call is carried out. Every result is text written for the
 * model; refusals (a person has control, a refused placement, bad input) are results too, so the
 * model reads why and does not retry blindly.
 */
import * as vscode from 'vscode';
import { parseAction, type ActionKind, type ActionOf, type ActionResult } from '../../core/actions/catalog';
import { ActionInputError, type Point } from '../../core/actions/input';
import type { AgentActionRunner } from '../../core/actions/agentActionRunner';
import { INLINE_TEXT_MAX, markdownCodeSpan, showText } from '../../core/toolMessages';
import type { Geometry } from '../../core/validate';
import { offerBuildForAgent } from '../../commands/image';
import { markWalkthrough } from '../../commands/walkthrough';
import type { Ctx } from '../../ctx';
import { problemMessage } from '../../messages';
import type { ScreenshotFolder } from './screenshotFolder';

export type DoneResult = Extract<ActionResult, { readonly status: 'done' }>;

/** A tool class: its id (the `name` of its `languageModelTools` entry in package.json) and constructor. */
export interface AgentToolClass {
  readonly id: string;
  new (): AgentTool<ActionKind>;
}

export abstract class AgentTool<K extends ActionKind> {
  /** The action this tool carries out (its entry in core/actions/catalog.ts). */
  abstract readonly kind: K;

  /** The chat's progress line; `action` is undefined for input that will be refused. */
  abstract invocationMessage(action: ActionOf<K> | undefined): string | vscode.MarkdownString;

  /**
   * What the person is asked before the action runs, showing the exact input so "allow" (and
   * "always allow") is a choice about what will happen. Looking and pointing ask nothing.
   */
  confirmationMessages(_action: ActionOf<K>): vscode.LanguageModelToolConfirmationMessages | undefined {
    return undefined;
  }

  /** The model's result of a finished action. */
  abstract doneMessage(action: ActionOf<K>, size: Geometry | undefined): string;

  doneResult(result: DoneResult, _shots: ScreenshotFolder): vscode.LanguageModelToolResult {
    return textResult(this.doneMessage(result.action as ActionOf<K>, result.size));
  }

  /**
   * The progress line and the question, both showing the exact input as it will be carried out
   * (a chord normalized, the URL as parsed). Input that will be rejected runs nothing, so it asks
   * nothing.
   */
  prepareInvocation(input: unknown): vscode.PreparedToolInvocation {
    let action: ActionOf<K> | undefined;
    try {
      action = parseAction(this.kind, input);
    } catch (err) {
      if (!(err instanceof ActionInputError)) {
        throw err;
      }
    }
    return { invocationMessage: this.invocationMessage(action), confirmationMessages: action && this.confirmationMessages(action) };
  }
}

/** What a tool call needs of the extension. */
export interface ToolHost {
  readonly ctx: Ctx;
  readonly runner: AgentActionRunner;
  readonly shots: ScreenshotFolder;
}

/** Carries out one call of `tool` (named `id`) and turns the outcome into the model's result. */
export async function invokeTool(
  host: ToolHost,
  id: string,
  tool: AgentTool<ActionKind>,
  input: unknown,
  token: vscode.CancellationToken,
): Promise<vscode.LanguageModelToolResult> {
  const abort = new AbortController();
  const cancel = token.onCancellationRequested(() => abort.abort());
  try {
    const result = await host.runner.perform(tool.kind, input, { signal: abort.signal });
    markWalkthrough('agentUsed');
    logResult(host.ctx, id, result);
    if (result.status === 'problem' && result.problem.code === 'imageMissing' && result.problem.buildable) {
      offerBuildForAgent(host.ctx);
    }
    return result.status === 'done' ? tool.doneResult(result, host.shots) : notDoneResult(result);
  } finally {
    cancel.dispose();
  }
}

function logResult(ctx: Ctx, name: string, result: ActionResult): void {
  switch (result.status) {
    case 'done':
      ctx.log.debug(`${name}: done in ${result.where}`);
      break;
    case 'humanHasControl':
      ctx.log.info(`${name}: refused, a person has control${result.discarded ? ' (result discarded)' : ''}`);
      break;
    case 'badInput':
      ctx.log.info(`${name}: bad input: ${result.message}`);
      break;
    case 'problem':
      ctx.log.info(`${name}: ${result.problem.code}`);
      break;
    case 'failed':
      ctx.log.warn(`${name}: ${result.what} failed: ${result.detail}`);
      break;
    case 'cancelled':
      ctx.log.debug(`${name}: cancelled`);
      break;
  }
}

/** Why the action did not happen (or its result was void), in the same words for every tool. */
function notDoneResult(result: Exclude<ActionResult, DoneResult>): vscode.LanguageModelToolResult {
  switch (result.status) {
    case 'humanHasControl': {
      const lines = [result.error.message];
      if (result.discarded) {
        lines.push(vscode.l10n.t('Control changed hands while this action ran, so its result was discarded.'));
      }
      if (result.progress) {
        lines.push(result.progress);
      }
      lines.push(vscode.l10n.t('After control is handed back, take a new screenshot before acting: the screen may have changed.'));
      return textResult(lines.join(' '));
    }
    case 'badInput':
      return textResult(vscode.l10n.t('Invalid input: {0}. Nothing was sent to the screen.', result.message));
    case 'problem':
      if (result.problem.code === 'notRunning' && result.placement?.where === 'host') {
        return textResult(
          vscode.l10n.t(
            'The screen is not running. It is placed on this machine (placement: gateway), outside any sandbox, and agents never start it there: ask the user to run "Bot Screen: Start Screen".',
          ),
        );
      }
      if (result.problem.code === 'imageMissing' && result.problem.buildable) {
        return textResult(
          vscode.l10n.t(
            'The screen cannot start: its sandbox image {0} is not built yet. Ask the user to build it (command "Bot Screen: Build Sandbox Image"; it takes a few minutes), then try again.',
            result.problem.image,
          ),
        );
      }
      return textResult(problemMessage(result.problem));
    case 'failed':
      return textResult(vscode.l10n.t('{0} failed: {1}', result.what, result.detail));
    case 'cancelled':
      return textResult(vscode.l10n.t('Cancelled.'));
  }
}

function textResult(value: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(value)]);
}

/** Markdown the chat renders as text only (no links followed, no HTML). */
export function markdown(value: string): vscode.MarkdownString {
  const md = new vscode.MarkdownString(value);
  md.isTrusted = false;
  md.supportHtml = false;
  return md;
}

/** Input shown in a one-line progress message: shortened, invisible characters spelled out, as code. */
export function inline(text: string): string {
  const shown = showText(text, INLINE_TEXT_MAX, true);
  return markdownCodeSpan(shown.truncated ? `${shown.shown}…` : shown.shown);
}

/** A point as results write it: `(x, y)`. */
export function at(p: Point): string {
  return `(${p.x}, ${p.y})`;
}

/** ` on the WxH screen` after a pointer result, when the size the action was checked against is known. */
export function onScreen(size: Geometry | undefined): string {
  return size ? vscode.l10n.t(' on the {0}x{1} screen', size.width, size.height) : '';
}
