/**
 * The live action overlay's host side: each agent action, as the runner begins it, goes to every
 * open viewer of the screen in this window as one `agentAction` message (what to draw and the
 * action in a few words), which webview/overlay.ts draws over the canvas. The setting
 * `botScreen.overlay.enabled` (and each view's toggle, which writes it) turns it off everywhere.
 *
 * Typed text is never sent, only how many characters: the text may be a password or a token the
 * agent types into a login form, and the overlay shows in every viewer (a shared or recorded
 * editor too), while the screen itself masks a password field. The person who allowed the typing
 * saw the exact text in the question before it ran. A page is named by its site, not its full
 * URL, whose query may hold a token.
 */
import * as vscode from 'vscode';
import type { AgentActionRunner } from './core/actions/agentActionRunner';
import type { AgentAction } from './core/actions/catalog';
import { Disposable } from './core/lifecycle';
import type { AgentMark, HostToWebview } from './protocol';

export const OVERLAY_SETTING = 'botScreen.overlay.enabled';

/** What the overlay needs of a viewer: a way to post it a message. */
export interface OverlayViewer {
  show(message: HostToWebview): void;
}

export function overlayEnabled(): boolean {
  return vscode.workspace.getConfiguration().get<boolean>(OVERLAY_SETTING, true) !== false;
}

/** The overlay's state for a viewer: on or off, and its toggle's label. */
export function overlayState(): HostToWebview {
  return { type: 'overlay', enabled: overlayEnabled(), label: vscode.l10n.t("Show the agent's actions on the screen") };
}

/** The view's toggle: the user's own setting (application scope: no workspace can override it). */
export function setOverlayEnabled(enabled: boolean): Thenable<void> {
  return vscode.workspace.getConfiguration().update(OVERLAY_SETTING, enabled, vscode.ConfigurationTarget.Global);
}

/** Sends each action the runner begins to every viewer, while the overlay is on. */
export class LiveOverlay extends Disposable {
  /** The setting, read once and again when it changes (not on every action). */
  private enabled = overlayEnabled();

  constructor(runner: AgentActionRunner, viewers: () => readonly OverlayViewer[]) {
    super();
    this.register(
      runner.onAction((action) => {
        if (!this.enabled) {
          return;
        }
        const message: HostToWebview = { type: 'agentAction', mark: agentMark(action), atMs: Date.now() };
        for (const viewer of viewers()) {
          viewer.show(message);
        }
      }),
    );
    this.register(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(OVERLAY_SETTING)) {
          this.enabled = overlayEnabled();
          const state = overlayState();
          for (const viewer of viewers()) {
            viewer.show(state);
          }
        }
      }),
    );
  }
}

/** What the overlay draws for `action`, with its words in the user's language. */
export function agentMark(action: AgentAction): AgentMark {
  switch (action.kind) {
    case 'screenshot':
      return { kind: 'screenshot', words: vscode.l10n.t('Taking a screenshot') };
    case 'move':
      return { kind: 'move', at: action.at, words: vscode.l10n.t('Moving to ({0}, {1})', action.at.x, action.at.y) };
    case 'click':
      return { kind: 'click', at: action.at, button: action.button, double: action.double, words: clickWords(action) };
    case 'drag':
      return {
        kind: 'drag',
        at: action.from,
        to: action.to,
        button: action.button,
        words: vscode.l10n.t('Dragging from ({0}, {1}) to ({2}, {3})', action.from.x, action.from.y, action.to.x, action.to.y),
      };
    case 'scroll':
      return { kind: 'scroll', at: action.at, direction: action.direction, words: scrollWords(action) };
    case 'type': {
      const count = Array.from(action.text).length;
      return { kind: 'type', words: count === 1 ? vscode.l10n.t('Typing 1 character') : vscode.l10n.t('Typing {0} characters', count) };
    }
    case 'key':
      return { kind: 'key', words: vscode.l10n.t('Pressing {0}', chordLabel(action.chord)) };
    case 'openUrl':
      return { kind: 'openUrl', words: vscode.l10n.t('Opening {0}', siteOf(action.url)) };
    case 'wait':
      return { kind: 'wait', words: vscode.l10n.t('Waiting {0} s', action.seconds) };
  }
}

function clickWords(action: Extract<AgentAction, { kind: 'click' }>): string {
  const { x, y } = action.at;
  switch (action.button) {
    case 'left':
      return action.double ? vscode.l10n.t('Double-clicking at ({0}, {1})', x, y) : vscode.l10n.t('Clicking at ({0}, {1})', x, y);
    case 'middle':
      return action.double ? vscode.l10n.t('Double-clicking the middle button at ({0}, {1})', x, y) : vscode.l10n.t('Middle-clicking at ({0}, {1})', x, y);
    case 'right':
      return action.double ? vscode.l10n.t('Double-clicking the right button at ({0}, {1})', x, y) : vscode.l10n.t('Right-clicking at ({0}, {1})', x, y);
  }
}

function scrollWords(action: Extract<AgentAction, { kind: 'scroll' }>): string {
  const { x, y } = action.at;
  switch (action.direction) {
    case 'up':
      return vscode.l10n.t('Scrolling up {0} at ({1}, {2})', action.amount, x, y);
    case 'down':
      return vscode.l10n.t('Scrolling down {0} at ({1}, {2})', action.amount, x, y);
    case 'left':
      return vscode.l10n.t('Scrolling left {0} at ({1}, {2})', action.amount, x, y);
    case 'right':
      return vscode.l10n.t('Scrolling right {0} at ({1}, {2})', action.amount, x, y);
  }
}

/** A chord as keyboards label it: `ctrl+shift+t` → `Ctrl+Shift+T`. */
export function chordLabel(chord: string): string {
  return chord
    .split('+')
    .map((key) => key.charAt(0).toUpperCase() + key.slice(1))
    .join('+');
}

/** The site of a URL the runner accepted (http or https): its host, never its path or query. */
function siteOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
