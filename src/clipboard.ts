/**
 * The clipboard between VS Code and the screen, on the extension host's side: it reads and
 * writes `vscode.env.clipboard` (which works where a webview may not touch the clipboard: a
 * browser window, a remote one) and has the viewer's noVNC move the text over the RFB stream.
 * Every move asks the viewer's input gate first (src/core/rfbInputGate.ts `allowsClipboard`):
 * only the viewer that holds control, only the ways `botScreen.clipboard` allows, at most the
 * gate's 256 KiB. Larger text and text the screen's server cannot take are refused with a message,
 * never cut or mangled.
 */
import * as vscode from 'vscode';
import { toScreenVerdict } from './core/clipboardText';
import type { Logger } from './core/logger';
import { DEFAULT_MAX_CLIPBOARD, type ClipboardPolicy, type RfbInputGate } from './core/rfbInputGate';
import type { HostToWebview } from './protocol';
import { userSetting } from './settings';

export const CLIPBOARD_SETTING = 'botScreen.clipboard';

const POLICIES: Readonly<Record<string, ClipboardPolicy>> = {
  both: { toScreen: true, fromScreen: true },
  toScreen: { toScreen: true, fromScreen: false },
  fromScreen: { toScreen: false, fromScreen: true },
  off: { toScreen: false, fromScreen: false },
};

/**
 * The user's `botScreen.clipboard`, read from the user settings only (see USER_ONLY_SETTINGS in
 * src/settings.ts: a workspace file could otherwise open the user's clipboard to the agent's
 * screen). An unknown value shares nothing.
 */
export function clipboardPolicy(): ClipboardPolicy {
  return POLICIES[String(userSetting<string>('clipboard') ?? 'both')] ?? POLICIES.off;
}

function kib(bytes: number): string {
  return String(Math.ceil(bytes / 1024));
}

/** One viewer's clipboard bridge. */
export class ViewerClipboard {
  /** The text last moved either way: sending it back would only take the selection from its owner. */
  private lastMoved: string | undefined;
  /** The text last refused, so a refusal is said once, not at every focus. */
  private lastRefused: string | undefined;

  constructor(
    private readonly gate: () => RfbInputGate | undefined,
    private readonly post: (message: HostToWebview) => void,
    private readonly log: Logger,
  ) {}

  /** Control or the setting changed, or a new session began: what the view shows, and what the screen is owed. */
  stateChanged(holdsControl: boolean): void {
    const policy = clipboardPolicy();
    const shared = holdsControl && (policy.toScreen || policy.fromScreen);
    // The label is sent without control too: the view keeps the button's room, so taking or
    // handing back control never rewraps its control bar (webview/stableLayout.ts).
    const label = !policy.toScreen && !policy.fromScreen
      ? ''
      : policy.toScreen && policy.fromScreen
        ? vscode.l10n.t('Clipboard shared')
        : policy.toScreen
          ? vscode.l10n.t('Clipboard shared: to the screen')
          : vscode.l10n.t('Clipboard shared: from the screen');
    const title = policy.toScreen ? vscode.l10n.t('Send the VS Code clipboard to the screen now') : label;
    this.post({ type: 'clipboard', label, title, shared, fromScreen: shared && policy.fromScreen });
    if (!holdsControl) {
      // The gate withdrew what this viewer announced: the next take-over sends it again.
      this.lastMoved = undefined;
    }
  }

  /** A new RFB session: the screen knows nothing this viewer sent before. */
  sessionOpened(): void {
    this.lastMoved = undefined;
  }

  /** Offers the VS Code clipboard to the screen (taking control, focusing the view, the view's button). */
  async toScreen(force: boolean): Promise<void> {
    if (!this.gate()?.allowsClipboard('toScreen')) {
      return;
    }
    let text: string;
    try {
      text = await vscode.env.clipboard.readText();
    } catch (err) {
      this.log.warn(`could not read the VS Code clipboard: ${String(err)}`);
      return;
    }
    if (text === '' || (!force && text === this.lastMoved)) {
      return;
    }
    // The read awaited: ask the gate again, now with the text.
    const bytes = Buffer.byteLength(text, 'utf8');
    switch (toScreenVerdict(this.gate(), text)) {
      case 'notAllowed':
        return;
      case 'tooLarge':
        this.refuse(text, force, vscode.l10n.t(
          'The VS Code clipboard holds {0} KiB of text, more than the {1} KiB the screen takes: it was not sent to the screen.',
          kib(bytes), kib(DEFAULT_MAX_CLIPBOARD)));
        return;
      case 'notLatin1':
        this.refuse(text, force, vscode.l10n.t(
          "The screen's VNC server has no extended (UTF-8) clipboard, so only Latin-1 text can go to it: the VS Code clipboard was not sent. TigerVNC 1.10 or later has it."));
        return;
    }
    this.lastMoved = text;
    this.post({ type: 'clipboardToScreen', text });
    this.log.debug(`clipboard: ${bytes} bytes offered to the screen`);
  }

  /** Text copied on the screen, as the viewer's noVNC received it. */
  async fromScreen(text: string): Promise<void> {
    const gate = this.gate();
    if (!gate?.allowsClipboard('fromScreen')) {
      this.log.debug('clipboard: text from the screen dropped (not in control, or not shared that way)');
      return;
    }
    const bytes = Buffer.byteLength(text, 'utf8');
    if (!gate.allowsClipboard('fromScreen', bytes)) {
      this.refuse(text, true, vscode.l10n.t(
        'The text copied on the screen is {0} KiB, more than the {1} KiB the clipboard takes: the VS Code clipboard was left as it was.',
        kib(bytes), kib(DEFAULT_MAX_CLIPBOARD)));
      return;
    }
    this.lastMoved = text;
    await vscode.env.clipboard.writeText(text);
    this.log.debug(`clipboard: ${bytes} bytes from the screen`);
  }

  private refuse(text: string, always: boolean, message: string): void {
    if (always || text !== this.lastRefused) {
      this.lastRefused = text;
      this.log.info(message);
      void vscode.window.showWarningMessage(message);
    }
  }
}
