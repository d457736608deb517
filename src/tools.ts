import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ActionInputError, parseAction, type ActionKind, type AgentAction, type Point, type Screenshot } from './core/agentActions';
import { AgentActionRunner, type ActionResult } from './core/agentTools';
import { CONFIRM_TEXT_MAX, INLINE_TEXT_MAX, markdownCodeBlock, markdownCodeSpan, showText, urlFacts } from './core/toolMessages';
import type { Ctx } from './ctx';
import { offerBuildForAgent } from './commands/image';
import { markWalkthrough } from './commands/walkthrough';
import { problemMessage } from './messages';

/**
 * The agent tools as VS Code language-model tools (`contributes.languageModelTools`): any chat
 * agent can see and act on the screen through them. Every result is text written for the model;
 * refusals (a person has control, a refused placement, bad input) are results too, so the model
 * reads why and does not retry blindly.
 */
export const AGENT_TOOLS: ReadonlyArray<{ readonly name: string; readonly kind: ActionKind }> = [
  { name: 'bot-screen_screenshot', kind: 'screenshot' },
  { name: 'bot-screen_move', kind: 'move' },
  { name: 'bot-screen_click', kind: 'click' },
  { name: 'bot-screen_drag', kind: 'drag' },
  { name: 'bot-screen_scroll', kind: 'scroll' },
  { name: 'bot-screen_type', kind: 'type' },
  { name: 'bot-screen_key', kind: 'key' },
  { name: 'bot-screen_open_url', kind: 'openUrl' },
  { name: 'bot-screen_wait', kind: 'wait' },
];

/** How many agent screenshots are kept on disk (oldest removed first). */
const KEEP_SCREENSHOTS = 20;

export function registerAgentTools(ctx: Ctx): AgentActionRunner {
  const runner = new AgentActionRunner(ctx.controller, ctx.control.store, ctx.log);
  const shots = new ScreenshotFolder(vscode.Uri.joinPath(ctx.extension.globalStorageUri, 'screenshots').fsPath);
  for (const { name, kind } of AGENT_TOOLS) {
    ctx.register(
      vscode.lm.registerTool<unknown>(name, {
        prepareInvocation: (options) => prepareToolInvocation(kind, options.input),
        invoke: async (options, token) => {
          const abort = new AbortController();
          const cancel = token.onCancellationRequested(() => abort.abort());
          try {
            const result = await runner.perform(kind, options.input, { signal: abort.signal });
            markWalkthrough('agentUsed');
            logResult(ctx, name, result);
            if (result.status === 'problem' && result.problem.code === 'imageMissing' && result.problem.buildable) {
              offerBuildForAgent(ctx);
            }
            return toolResult(result, shots);
          } finally {
            cancel.dispose();
          }
        },
      }),
    );
  }
  return runner;
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

function toolResult(result: ActionResult, shots: ScreenshotFolder): vscode.LanguageModelToolResult {
  const text = (value: string) => new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(value)]);
  switch (result.status) {
    case 'done': {
      if (result.screenshot) {
        const file = shots.save(result.screenshot);
        const parts: unknown[] = [
          new vscode.LanguageModelTextPart(
            vscode.l10n.t(
              'Screenshot of the {0}x{1} screen (coordinates for the other Bot Screen tools are pixels of this image, origin top left), saved as a PNG file: {2}',
              result.screenshot.width,
              result.screenshot.height,
              file,
            ),
          ),
        ];
        const image = imagePart(result.screenshot.png);
        if (image) {
          parts.push(image);
        }
        return new vscode.LanguageModelToolResult(parts as vscode.LanguageModelTextPart[]);
      }
      return text(doneMessage(result.action, result.size));
    }
    case 'humanHasControl': {
      const lines = [result.error.message];
      if (result.discarded) {
        lines.push(vscode.l10n.t('Control changed hands while this action ran, so its result was discarded.'));
      }
      if (result.progress) {
        lines.push(result.progress);
      }
      lines.push(vscode.l10n.t('After control is handed back, take a new screenshot before acting: the screen may have changed.'));
      return text(lines.join(' '));
    }
    case 'badInput':
      return text(vscode.l10n.t('Invalid input: {0}. Nothing was sent to the screen.', result.message));
    case 'problem':
      if (result.problem.code === 'notRunning' && result.placement?.where === 'host') {
        return text(
          vscode.l10n.t(
            'The screen is not running. It is placed on this machine (placement: gateway), outside any sandbox, and agents never start it there: ask the user to run "Bot Screen: Start Screen".',
          ),
        );
      }
      if (result.problem.code === 'imageMissing' && result.problem.buildable) {
        return text(
          vscode.l10n.t(
            'The screen cannot start: its sandbox image {0} is not built yet. Ask the user to build it (command "Bot Screen: Build Sandbox Image"; it takes a few minutes), then try again.',
            result.problem.image,
          ),
        );
      }
      return text(problemMessage(result.problem));
    case 'failed':
      return text(vscode.l10n.t('{0} failed: {1}', result.what, result.detail));
    case 'cancelled':
      return text(vscode.l10n.t('Cancelled.'));
  }
}

/**
 * The screenshot as an image part, where this VS Code carries images in tool results. In 1.99 the
 * host converts only text and prompt-tsx parts (anything else makes the whole call fail), and its
 * LanguageModelDataPart lacks the static `image` of the finished API: that static is the sign.
 */
function imagePart(png: Uint8Array): unknown {
  const DataPart = (vscode as unknown as { LanguageModelDataPart?: { image?: (data: Uint8Array, mime: string) => unknown } }).LanguageModelDataPart;
  return typeof DataPart?.image === 'function' ? DataPart.image(png, 'image/png') : undefined;
}

function doneMessage(action: AgentAction, size: { width: number; height: number } | undefined): string {
  const at = (p: Point) => `(${p.x}, ${p.y})`;
  const screen = size ? vscode.l10n.t(' on the {0}x{1} screen', size.width, size.height) : '';
  switch (action.kind) {
    case 'screenshot':
      return vscode.l10n.t('Screenshot taken.');
    case 'move':
      return vscode.l10n.t('Moved the pointer to {0}{1}.', at(action.at), screen);
    case 'click':
      return action.double
        ? vscode.l10n.t('Double-clicked the {0} button at {1}{2}.', action.button, at(action.at), screen)
        : vscode.l10n.t('Clicked the {0} button at {1}{2}.', action.button, at(action.at), screen);
    case 'drag':
      return vscode.l10n.t('Dragged with the {0} button from {1} to {2}{3}.', action.button, at(action.from), at(action.to), screen);
    case 'scroll':
      return vscode.l10n.t('Scrolled {0} by {1} at {2}{3}.', action.direction, action.amount, at(action.at), screen);
    case 'type':
      return vscode.l10n.t('Typed {0} characters.', Array.from(action.text).length);
    case 'key':
      return vscode.l10n.t('Pressed {0}.', action.chord);
    case 'openUrl':
      return vscode.l10n.t('Opened {0} in the browser on the screen. Take a screenshot to see the page once it has loaded.', action.url);
    case 'wait':
      return vscode.l10n.t('Waited {0} seconds.', action.seconds);
  }
}

/**
 * The chat's progress line and, before the agent types, presses keys or opens a page, the
 * question to the person, both showing the exact input as it will be carried out (a chord
 * normalized, the URL as parsed). Input that will be rejected runs nothing, so it asks nothing.
 */
export function prepareToolInvocation(kind: ActionKind, input: unknown): vscode.PreparedToolInvocation {
  let action: AgentAction | undefined;
  try {
    action = parseAction(kind, input);
  } catch (err) {
    if (!(err instanceof ActionInputError)) {
      throw err;
    }
  }
  return { invocationMessage: invocationMessage(kind, action), confirmationMessages: action && confirmationMessages(action) };
}

/** Markdown the chat renders as text only (no links followed, no HTML). */
function markdown(value: string): vscode.MarkdownString {
  const md = new vscode.MarkdownString(value);
  md.isTrusted = false;
  md.supportHtml = false;
  return md;
}

function inline(text: string): string {
  const shown = showText(text, INLINE_TEXT_MAX, true);
  return markdownCodeSpan(shown.truncated ? `${shown.shown}…` : shown.shown);
}

function invocationMessage(kind: ActionKind, action: AgentAction | undefined): string | vscode.MarkdownString {
  switch (action?.kind) {
    case 'click':
      return vscode.l10n.t('Clicking at ({0}, {1}) on the Bot Screen', action.at.x, action.at.y);
    case 'type':
      return markdown(vscode.l10n.t('Typing {0} ({1} characters) on the Bot Screen', inline(action.text), Array.from(action.text).length));
    case 'key':
      return markdown(vscode.l10n.t('Pressing {0} on the Bot Screen', inline(action.chord)));
    case 'openUrl':
      return markdown(vscode.l10n.t('Opening {0} on the Bot Screen', inline(action.url)));
  }
  switch (kind) {
    case 'screenshot':
      return vscode.l10n.t('Taking a screenshot of the Bot Screen');
    case 'move':
      return vscode.l10n.t('Moving the pointer on the Bot Screen');
    case 'click':
      return vscode.l10n.t('Clicking on the Bot Screen');
    case 'drag':
      return vscode.l10n.t('Dragging on the Bot Screen');
    case 'scroll':
      return vscode.l10n.t('Scrolling on the Bot Screen');
    case 'type':
      return vscode.l10n.t('Typing on the Bot Screen');
    case 'key':
      return vscode.l10n.t('Pressing keys on the Bot Screen');
    case 'openUrl':
      return vscode.l10n.t('Opening a URL on the Bot Screen');
    case 'wait':
      return vscode.l10n.t('Waiting');
  }
}

/**
 * What the person is asked before the agent types, presses keys or opens a page: the exact input,
 * so "allow" (and "always allow") is a choice about what will happen. Looking and pointing
 * (screenshot, move, click, drag, scroll, wait) run without asking.
 */
function confirmationMessages(action: AgentAction): vscode.LanguageModelToolConfirmationMessages | undefined {
  switch (action.kind) {
    case 'type': {
      const shown = showText(action.text, CONFIRM_TEXT_MAX);
      const lines = [
        vscode.l10n.t('The agent wants to type this text ({0} characters) into whatever has the keyboard focus on the Bot Screen:', shown.total),
        '',
        markdownCodeBlock(shown.shown),
      ];
      if (shown.truncated) {
        lines.push('', vscode.l10n.t('Only the first {0} of {1} characters are shown.', CONFIRM_TEXT_MAX, shown.total));
      }
      return { title: vscode.l10n.t('Type on the Bot Screen?'), message: markdown(lines.join('\n')) };
    }
    case 'key':
      return {
        title: vscode.l10n.t('Press keys on the Bot Screen?'),
        message: markdown(vscode.l10n.t('The agent wants to press {0} on the Bot Screen.', markdownCodeSpan(showText(action.chord, CONFIRM_TEXT_MAX, true).shown))),
      };
    case 'openUrl': {
      // An http(s) URL of at most 8192 characters: shown whole, since any part of it may matter.
      const facts = urlFacts(action.url);
      const lines = [
        vscode.l10n.t('The agent wants to open this address in the browser on the Bot Screen:'),
        '',
        markdownCodeBlock(showText(action.url, Number.POSITIVE_INFINITY, true).shown),
      ];
      if (facts) {
        lines.push('', vscode.l10n.t('Site: {0}', markdownCodeSpan(showText(facts.host, CONFIRM_TEXT_MAX, true).shown)));
        if (facts.insecure) {
          lines.push('', vscode.l10n.t('The address is plain http: the page travels unencrypted.'));
        }
      }
      return { title: vscode.l10n.t('Open a web page on the Bot Screen?'), message: markdown(lines.join('\n')) };
    }
    default:
      return undefined;
  }
}

/** Agent screenshots on disk: private (0700 dir, 0600 files), the newest few kept. */
class ScreenshotFolder {
  constructor(private readonly dir: string) {}

  save(shot: Screenshot): string {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const file = path.join(this.dir, `screenshot-${stamp}-${Math.random().toString(36).slice(2, 8)}.png`);
    fs.writeFileSync(file, shot.png, { mode: 0o600 });
    this.prune();
    return file;
  }

  private prune(): void {
    try {
      const files = fs
        .readdirSync(this.dir)
        .filter((f) => /^screenshot-.*\.png$/.test(f))
        .sort();
      for (const old of files.slice(0, Math.max(0, files.length - KEEP_SCREENSHOTS))) {
        fs.rmSync(path.join(this.dir, old), { force: true });
      }
    } catch {
      // best effort
    }
  }
}
