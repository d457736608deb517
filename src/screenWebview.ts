// One Screen viewer (side bar view or editor panel) bound to the screen: its relay, input gate and messages.
import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { CLIPBOARD_SETTING, clipboardPolicy, ViewerClipboard } from './clipboard';
import type { Control } from './control';
import { ResizeRestore } from './core/actions/screenSize';
import { Disposable, type DisposableLike } from './core/lifecycle';
import { RfbInputGate } from './core/rfbInputGate';
import type { Logger } from './core/logger';
import { overlayState, setOverlayEnabled } from './liveOverlay';
import { BridgeSession, type BridgeProcess } from './core/bridgeProcess';
import type { DirectAddress, DirectEndpoint } from './directEndpoint';
import { RfbPump } from './core/pump';
import { PumpedRelay, type ViewerStream } from './core/viewerStream';
import type { ScreenController } from './core/screen';
import { errorMessage, ScreenError } from './core/problem';
import { controlLabel, problemMessage, statusWords, viewersLabel, viewStrings } from './messages';
import type { HostToWebview, ViewAction, ViewMode, WebviewToHost } from './protocol';
import { affectsScreenOptions, keyboardGateOptions, screenOptionsMessage } from './screenOptions';
import { statusView } from './statusView';
import type { ViewerCount } from './viewerCount';
import { screenHtml, webviewRoots } from './webviewHtml';

/**
 * A hidden viewer's relay is read until it has been quiet this long: the webview's pause (a message
 * there, one to the server) quiets the server within a round trip or two, and what was on its way
 * drains meanwhile, fences answered...
 */
const HIDDEN_QUIET_MS = 150;
/** ...or this long at most (a loaded machine, or a session that cannot pause). */
const HIDDEN_READ_MAX_MS = 1000;
const HIDDEN_READ_TIMES = { quietMs: HIDDEN_QUIET_MS, maxMs: HIDDEN_READ_MAX_MS };

/**
 * Binds one webview (the sidebar Screen view or the editor panel) to the screen. Each viewer
 * has its own relay; closing a viewer kills that relay only, never the screen. While the
 * viewer is hidden the webview pauses its RFB session and, a moment later, its relay is no longer
 * read, so no bytes flow and the RFB session waits intact.
 * Every byte the viewer sends passes an input gate: input reaches the screen only while this
 * viewer holds control. The bytes travel over the direct channel (a loopback WebSocket, see
 * src/core/directChannel.ts) when the webview can reach it, else over postMessage.
 */
export class ScreenWebview extends Disposable {
  /** A capability: who this viewer is in the lease. Never shown. */
  readonly viewerId = randomUUID();
  /** The current session's bytes: over the direct channel (read in the bridge process) or posted. */
  private stream: ViewerStream | undefined;
  private gate: RfbInputGate | undefined;
  /** Where the webview may dial the direct channel; undefined means postMessage only. */
  private direct: DirectAddress | undefined;
  /** The relay was started while the webview booted and waits for the webview's first session. */
  private early = false;
  /** This viewer's place in the viewer count, while its relay is open. */
  private counted: DisposableLike | undefined;
  /** VS Code's visibility (a session's stream decides when a hidden viewer's relay is read: src/core/hiddenRead.ts). */
  private visible: boolean;
  /** VS Code's visibility changes so far: the webview applies each once, whichever way comes first. */
  private visibilitySeq = 0;
  private readonly clipboard: ViewerClipboard;
  private readonly resize: ResizeRestore;

  constructor(
    private readonly webview: vscode.Webview,
    extensionUri: vscode.Uri,
    private readonly controller: ScreenController,
    private readonly control: Control,
    private readonly log: Logger,
    private readonly inEditor: boolean,
    visible: boolean,
    endpoint: DirectEndpoint,
    private readonly viewerCount: ViewerCount,
  ) {
    super();
    this.visible = visible;
    this.resize = new ResizeRestore(() => controller.runningSandbox(), log);
    webview.options = { enableScripts: true, localResourceRoots: webviewRoots(extensionUri) };
    this.clipboard = new ViewerClipboard(() => this.gate, (message) => this.post(message), log);
    // The page's CSP names the direct channel's origin, so the page waits for it (a few ms).
    void endpoint.resolve().then((direct) => {
      if (!this.isDisposed) {
        this.direct = direct;
        webview.html = screenHtml(webview, extensionUri, vscode.l10n.t('Bot Screen'), direct?.origins);
        // The relay's exec starts while the webview boots (about a second); its first bytes wait
        // in the socket pump. Only for the direct channel: postMessage bytes cannot wait for a page.
        if (direct?.bridge.alive && controller.status.state === 'running') {
          this.early = this.startRelay(true, false);
        }
      }
    });
    this.register(webview.onDidReceiveMessage((message: WebviewToHost) => this.receive(message)));
    this.register(
      controller.onStatus((status) => {
        if (status.state !== 'running') {
          this.closeRelay(status.state === 'gone' ? problemMessage({ code: 'sandboxGone' }) : '');
        }
        this.post({ type: 'status', status: statusView(status, inEditor, statusWords()) });
      }),
    );
    this.register(
      control.onDidChange((lease) => {
        if (!this.holdsControl()) {
          this.releaseHeld();
        }
        this.resize.onControl(lease);
        this.postControl();
        this.clipboardState();
      }),
    );
    this.register(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(CLIPBOARD_SETTING)) {
          this.clipboardState();
        }
      }),
    );
    this.register(
      vscode.workspace.onDidChangeConfiguration((event) => {
        const { viewMode, keyboard } = affectsScreenOptions(event);
        if (viewMode) {
          this.post(screenOptionsMessage());
        }
        if (keyboard) {
          this.closeRelay(''); // the gate's keyboard mode is fixed per stream: the view reconnects with the new one
        }
      }),
    );
    this.register(viewerCount.onDidChange(() => this.postViewers()));
  }

  /** Takes control for this viewer (a person acts; the agent's tools are refused). */
  takeControl(): void {
    this.control.take(this.viewerId);
  }

  /** A view mode picked in this viewer's title toolbar; the view's own buttons follow it. */
  setViewMode(mode: ViewMode): void {
    this.post({ type: 'viewMode', mode });
  }

  /** True when this viewer holds control. */
  holdsControl(): boolean {
    return this.control.viewerHolds(this.viewerId);
  }

  /** A message from outside this viewer's session (the live overlay's actions and state). */
  show(message: HostToWebview): void {
    this.post(message);
  }

  setVisible(visible: boolean): void {
    // Hidden: the webview pauses the session at the RFB level first (webview/rfbPause.ts): what is
    // on its way still arrives, fences are answered, and the server has nothing in flight when the
    // relay stops being read once it went quiet, as the backstop that keeps a hidden viewer at 0 bytes.
    this.visible = visible;
    const seq = ++this.visibilitySeq;
    // A direct session's socket says it too, ahead of the post below, which waits behind the
    // workbench's work (a hide's for seconds).
    this.stream?.setVisible(visible, seq);
    this.post({ type: 'visible', visible, seq });
  }

  /** A clean close of the holder's view hands control back; a dropped relay does not. */
  override dispose(): void {
    if (this.isDisposed) {
      return; // the panel's own dispose and its owner's both end here
    }
    this.releaseHeld(); // before the hand back: the agent's next action finds nothing pressed
    this.control.handBack(this.viewerId);
    this.closeRelay('');
    super.dispose();
  }

  private receive(message: WebviewToHost): void {
    switch (message.type) {
      case 'ready':
        // A new document (first load, or re-created after being discarded): any old relay
        // belongs to a session that no longer exists; one started for this document stays.
        if (!this.early) {
          this.closeRelay('');
        }
        this.post({ type: 'hello', strings: viewStrings(), status: statusView(this.controller.status, this.inEditor, statusWords()) });
        // 'ready' asks for a session too when the screen runs: no 'connect' round trip first. The
        // session's 'open' goes right behind the hello, so the webview dials while the view's other
        // state (options, control, viewers, overlay) is still on its way: all of it arrives before
        // the socket opens, and noVNC takes control and view mode whenever they come.
        if (this.controller.status.state === 'running') {
          this.openRelay(message.origin);
        } else {
          this.closeRelay('');
        }
        this.post({ type: 'visible', visible: this.visible, seq: this.visibilitySeq });
        this.post(screenOptionsMessage());
        this.postControl();
        this.clipboardState();
        this.postViewers();
        this.post(overlayState());
        break;
      case 'connect':
        this.openRelay(message.origin);
        break;
      case 'disconnect':
        // The webview ended its session itself: no 'closed' back, which it could take for
        // the answer to the 'connect' of its next session.
        this.closeRelay('', false);
        break;
      case 'rfb':
        this.forwardInput(message.data);
        break;
      case 'action':
        if (message.action === 'takeControl') {
          this.takeControl();
        } else if (message.action === 'handBack') {
          this.control.handBack(this.viewerId);
        } else {
          // A fix of the shown problem goes to the one command that applies fixes, named by its kind.
          const command = ACTION_COMMANDS[message.action];
          void vscode.commands.executeCommand(command, ...(command === APPLY_FIX_COMMAND ? [message.action] : []));
        }
        break;
      case 'frame':
        this.log.debug(`first frame drawn in the ${this.inEditor ? 'editor panel' : 'Screen view'}`);
        this.clipboardState(); // the session is up, and the server's clipboard caps known
        break;
      case 'clipboardFromScreen':
        void this.clipboard.fromScreen(message.text);
        break;
      case 'clipboardSync':
        void this.clipboard.toScreen(message.force);
        break;
      case 'overlay':
        void setOverlayEnabled(message.enabled === true);
        break;
      case 'log':
        this.log.info(`${this.inEditor ? 'editor panel' : 'Screen view'}: ${String(message.message).slice(0, 300)}`);
        break;
    }
  }

  /** `origin`: the webview's own, when it would dial the direct channel. */
  private openRelay(origin: string | undefined): void {
    const direct = origin !== undefined ? this.direct : undefined;
    // The relay started early is this session's when it is fresh and the webview dials directly.
    const reuse = this.early && direct !== undefined && this.stream instanceof BridgeSession;
    this.early = false;
    if (!reuse && !this.startRelay(direct !== undefined, true)) {
      return;
    }
    const stream = this.stream;
    let urls: string[] | undefined;
    if (direct && origin !== undefined && stream instanceof BridgeSession) {
      const token = stream.offer(origin);
      urls = direct.bases.map((base) => base + token);
    }
    this.post({ type: 'open', urls });
  }

  /**
   * A new relay with its gate: read in the bridge process for the direct channel (when it runs),
   * else here and posted; false when none could start.
   */
  private startRelay(direct: boolean, report: boolean): boolean {
    this.closeRelay('');
    let stream: ViewerStream;
    try {
      const bridge = direct ? this.direct?.bridge : undefined;
      stream = bridge?.alive ? this.openBridged(bridge) : this.openPosted();
    } catch (err) {
      if (report) {
        const reason = err instanceof ScreenError ? problemMessage(err.problem) : errorMessage(err);
        this.post({ type: 'closed', reason });
      }
      return false;
    }
    this.stream = stream;
    this.counted = this.viewerCount.add(this.viewerId, this.inEditor ? 'panel' : 'view');
    this.gate = new RfbInputGate(() => this.control.viewerHolds(this.viewerId), {
      clipboard: clipboardPolicy,
      ...keyboardGateOptions(),
      // A revealed webview's resume (continuous updates on) starts reading before VS Code says "visible".
      observe: (message) => this.stream?.observe(message),
    });
    this.clipboard.sessionOpened();
    void stream.exited.then(() => {
      if (this.stream === stream) {
        this.stream = undefined;
        this.early = false;
        this.gate = undefined;
        this.uncount();
        this.post({ type: 'closed', reason: '' });
      }
    });
    return true;
  }

  private openPosted(): ViewerStream {
    const relay = this.controller.openRelay();
    const post = (data: Uint8Array) => this.webview.postMessage({ type: 'rfb', data } satisfies HostToWebview);
    return new PumpedRelay(relay, new RfbPump(relay.stdout, post), this.visible, HIDDEN_READ_TIMES);
  }

  /** The relay runs in the bridge; the webview's socket messages come back here, to the gate. */
  private openBridged(bridge: BridgeProcess): BridgeSession {
    const { command, exited } = this.controller.relayCommand();
    const session = bridge.open(command, this.visible, HIDDEN_READ_TIMES, {
      exited,
      activity: () => this.controller.noteActivity(),
    });
    // Messages already on their way when the session ended must not reach the next one's gate.
    session.onInput = (data) => {
      if (this.stream === session) {
        this.forwardInput(data);
      }
    };
    session.onSocketClosed = () => {
      if (this.stream === session) {
        this.closeRelay('');
      }
    };
    return session;
  }

  /** The viewer's bytes, through the gate: handshake and requests always, input only with control. */
  private forwardInput(data: Uint8Array): void {
    if (!this.stream || !this.gate) {
      return;
    }
    const { forward, close } = this.gate.push(data);
    this.resize.noteGate(this.gate);
    for (const bytes of forward) {
      this.stream.write(bytes);
    }
    if (close) {
      this.log.warn(`closing a viewer's stream: ${close}`);
      this.closeRelay(close);
    }
  }

  /** Control ended for this viewer: the keys and buttons it held are released on the screen. */
  private releaseHeld(): void {
    if (this.stream && this.gate) {
      for (const bytes of this.gate.release().forward) {
        this.stream.write(bytes);
      }
    }
  }

  private postControl(): void {
    const lease = this.control.current;
    const mine = this.control.viewerHolds(this.viewerId);
    this.post({ type: 'control', label: controlLabel(lease.holder, mine, lease.unreadable !== undefined), mine });
  }

  /** The view's clipboard state; taking control offers the VS Code clipboard to the screen. */
  private clipboardState(): void {
    const mine = this.holdsControl();
    this.clipboard.stateChanged(mine);
    if (mine) {
      void this.clipboard.toScreen(false);
    }
  }

  private closeRelay(reason: string, tell = true): void {
    const stream = this.stream;
    if (!stream) {
      return;
    }
    const releases = this.gate?.release().forward ?? [];
    this.stream = undefined;
    this.early = false;
    this.gate = undefined;
    this.uncount();
    stream.end(releases);
    if (tell) {
      this.post({ type: 'closed', reason });
    }
  }

  private uncount(): void {
    this.counted?.dispose();
    this.counted = undefined;
  }

  private postViewers(): void {
    const count = this.viewerCount.current;
    this.post({ type: 'viewers', count, label: viewersLabel(count) });
  }

  private post(message: HostToWebview): void {
    void this.webview.postMessage(message);
  }
}

/** The view's buttons that fix the problem it shows; src/commands/screen.ts runs them. */
export const APPLY_FIX_COMMAND = 'botScreen.applyFix';

/** The command each of the view's buttons runs (a fix runs the one command that applies fixes). */
const ACTION_COMMANDS: { readonly [A in ViewAction]: string } = {
  start: 'botScreen.start',
  stop: 'botScreen.stop',
  openInEditor: 'botScreen.openInEditor',
  installHostDesktop: 'botScreen.installHostDesktop',
  showLogs: 'botScreen.showLogs',
  switchImage: 'botScreen.switchImage',
  keepImage: 'botScreen.keepImage',
  takeControl: 'botScreen.takeControl',
  handBack: 'botScreen.handBack',
  openSettings: APPLY_FIX_COMMAND,
  buildImage: APPLY_FIX_COMMAND,
  startDocker: APPLY_FIX_COMMAND,
  installDocker: APPLY_FIX_COMMAND,
  allowHost: APPLY_FIX_COMMAND,
  manageTrust: APPLY_FIX_COMMAND,
};
