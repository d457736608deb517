// The Screen webview's half of the clipboard: the "Clipboard shared" button in the control bar,
// noVNC's clipboard events to the host, and the host's text to noVNC. The webview never touches
// the system clipboard itself (src/clipboard.ts does, through vscode.env.clipboard); the host
// and its input gate decide every move, and this side forwards nothing it was not told it may.
import type RFB from '@novnc/novnc';
import type { HostToWebview, WebviewToHost } from '../src/protocol';

type ClipboardMessage = Extract<HostToWebview, { type: 'clipboard' | 'clipboardToScreen' }>;

export class ClipboardBridge {
  private readonly button: HTMLButtonElement;
  private session: RFB | undefined;
  /** Set by the host: this view holds control and may take the screen's copies. */
  private fromScreen = false;

  constructor(
    controlBar: HTMLElement,
    before: HTMLElement,
    private readonly post: (message: WebviewToHost) => void,
  ) {
    this.button = document.createElement('button');
    this.button.id = 'clipboard';
    this.button.className = 'secondary';
    this.button.hidden = true;
    controlBar.insertBefore(this.button, before);
    this.button.addEventListener('click', () => this.post({ type: 'clipboardSync', force: true }));
    // Coming back to the view (after copying elsewhere) offers the new clipboard to the screen.
    window.addEventListener('focus', () => this.sync());
    document.addEventListener('focusin', () => this.sync());
  }

  /** The session whose clipboard events go to the host (its 'clipboard' event fires only while not view-only). */
  attach(session: RFB): void {
    this.session = session;
    session.addEventListener('clipboard', (event) => {
      const text = (event as CustomEvent<{ text: string }>).detail.text;
      if (this.session === session && this.fromScreen && !session.viewOnly) {
        this.post({ type: 'clipboardFromScreen', text });
      }
    });
  }

  receive(message: ClipboardMessage): void {
    if (message.type === 'clipboard') {
      this.fromScreen = message.fromScreen;
      this.button.textContent = message.label;
      this.button.title = message.title;
      // Not shared: invisible but in its place, so a control change moves nothing (media/screen.css).
      this.button.hidden = message.label === '';
      this.button.dataset.shared = String(message.shared);
    } else if (this.session && !this.session.viewOnly) {
      this.session.clipboardPasteFrom(message.text);
    }
  }

  private sync(): void {
    if (!this.button.hidden && this.button.dataset.shared === 'true') {
      this.post({ type: 'clipboardSync', force: false });
    }
  }
}
