// The Screen webview's script: the view's header, actions and bars, and the noVNC session that
// draws the screen over the host's relay (direct channel or postMessage: ./transport.ts).
import RFB from '@novnc/novnc';
import type { HostToWebview, ScreenStatusView, ViewAction, ViewStrings, WebviewToHost } from '../src/protocol';
import { ScreenA11y } from './a11y';
import type { ScreenChannel } from './channel';
import { ClipboardBridge } from './clipboard';
import { ConnectionPanel } from './connectionPanel';
import { decodeRectsAsBitmaps } from './imageDecode';
import { ActionOverlay } from './overlay';
import { SessionWatch, type Clock } from './reconnect';
import { RfbPause, type PausableSession } from './rfbPause';
import { SendKeysMenu } from './sendKeys';
import { StableLayout } from './stableLayout';
import { ScreenStats } from './stats';
import { Transports } from './transport';
import { ViewModeControl } from './viewMode';

declare function acquireVsCodeApi(): { postMessage(message: WebviewToHost): void };
/**
 * Left by the page's first script (src/webviewHtml.ts), which said `ready` before this bundle ran:
 * the webview API, and the messages that came before the listener below.
 */
interface EarlyReady {
  api: ReturnType<typeof acquireVsCodeApi>;
  queued: MessageEvent<HostToWebview>[];
  listener: (event: MessageEvent) => void;
}
const early = (window as { botScreenEarly?: EarlyReady }).botScreenEarly;

const vscode = early?.api ?? acquireVsCodeApi();
const post = (message: WebviewToHost): void => vscode.postMessage(message);

// Before any session: noVNC's data: URL images grew the renderer without bound under a flood.
decodeRectsAsBitmaps((blob) => createImageBitmap(blob));

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const where = $('where');
const badge = $('badge');
const actions = $('actions');
const detail = $('detail');
const keyboardBar = $('keyboard');
const keyboardText = $('keyboard-text');
const releaseButton = $<HTMLButtonElement>('release');
const controlBar = $('control');
const controlText = $('control-text');
const controlButton = $<HTMLButtonElement>('control-button');
/** How many viewers watch, beside who holds control. */
const viewersText = document.createElement('span');
viewersText.id = 'viewers';
viewersText.className = 'viewers';
controlButton.before(viewersText);
const screen = $('screen');
const stats = new ScreenStats($('connection'), (atMs) => {
  post({ type: 'frame', atMs });
  watch.frameDrawn();
});
const clipboard = new ClipboardBridge(controlBar, controlButton, post);
const viewMode = new ViewModeControl(controlBar, controlButton, screen);
const sendKeys = new SendKeysMenu(controlBar, controlButton, () => rfb);
const layout = new StableLayout($('chrome'), $('stage'), keyboardBar);
const a11y = new ScreenA11y(screen, $('announce'));
// The overlay's toggle sits in the header beside the connection panel's: a view setting, not a control.
const connectionToggle = $('connection-toggle');
const overlay = new ActionOverlay(connectionToggle.parentElement ?? document.body, connectionToggle, $('stage'), screen, post, (text) => a11y.announce(text));
const panel = new ConnectionPanel($('connection'), $('connection-stats'), $<HTMLButtonElement>('connection-toggle'), stats, () => rfb);

let strings: ViewStrings | undefined;
/** Whether this viewer's input reaches the screen; noVNC stays view-only otherwise. */
let inControl = false;
let status: ScreenStatusView | undefined;
let rfb: RFB | undefined;
let channel: ScreenChannel | undefined;
/** The session's pause while the view is hidden (./rfbPause.ts). */
let pause: RfbPause | undefined;
/** Whether the view is on screen, as the host last said. */
let visible = true;
const transports = new Transports(post, stats, () => watch.dataReceived(), () => setVisible(true, 'socket'));
/**
 * The host opens a relay on `ready` when the screen runs (one round trip less on open); the
 * hello's status says whether it did, and the watch's first connect is then already answered.
 */
let answeredByReady = false;

const clock: Clock = {
  now: () => Date.now(),
  after: (ms, run) => {
    const timer = window.setTimeout(run, ms);
    return () => window.clearTimeout(timer);
  },
  every: (ms, run) => {
    const timer = window.setInterval(run, ms);
    return () => window.clearInterval(timer);
  },
};
/** When to (re)open the session, and whether the open one works (./reconnect.ts). */
const watch = new SessionWatch(clock, {
  connect: () => {
    stats.setConnection('connecting');
    if (answeredByReady) {
      answeredByReady = false;
      return;
    }
    post({ type: 'connect', origin: transports.connectOrigin() });
  },
  drop: () => dropSession(),
  fullRefresh: () => requestUpdate(false),
  ping: () => requestUpdate(true),
  log: (message) => post({ type: 'log', message }),
  changed: () => renderBadge(),
});

window.addEventListener('message', (event: MessageEvent<HostToWebview>) => receive(event.data));

function receive(message: HostToWebview): void {
  switch (message.type) {
    case 'hello':
      strings = message.strings;
      releaseButton.textContent = strings.releaseKeyboard;
      keyboardText.textContent = strings.keyboardCaptured;
      panel.setStrings(strings);
      a11y.setStrings(strings);
      answeredByReady = message.status.state === 'running';
      render(message.status);
      break;
    case 'status':
      render(message.status);
      break;
    case 'open':
      // No channel: the direct one could not be dialled; ask again, for postMessage.
      void transports.open(message.urls).then((opened) => (opened ? openSession(opened) : redial()));
      break;
    case 'visible':
      setVisible(message.visible, 'post');
      break;
    case 'viewers':
      viewersText.textContent = message.label;
      viewersText.dataset.count = String(message.count);
      break;
    case 'options':
      viewMode.setStrings(message.strings);
      sendKeys.setStrings(message.strings);
      viewMode.setDefault(message.viewMode);
      break;
    case 'viewMode':
      viewMode.pick(message.mode);
      break;
    case 'control':
      inControl = message.mine;
      stats.setInControl(message.mine);
      controlText.textContent = message.label;
      controlText.title = message.label; // the bar shows one line of it (media/screen.css)
      controlButton.textContent = (message.mine ? strings?.handBack : strings?.takeControl) ?? '';
      // The other label keeps its room in the button, so the button's width never changes.
      controlButton.dataset.other = (message.mine ? strings?.takeControl : strings?.handBack) ?? '';
      controlButton.dataset.action = message.mine ? 'handBack' : 'takeControl';
      controlBar.dataset.mine = String(message.mine);
      a11y.setControl(message.label, message.mine);
      if (rfb) {
        rfb.viewOnly = !message.mine;
      }
      viewMode.setInControl(message.mine);
      sendKeys.setInControl(message.mine);
      if (!message.mine) {
        showKeyboardBar(false);
      }
      break;
    case 'rfb':
      stats.received(message.data.byteLength);
      watch.dataReceived();
      channel?.deliver(message.data);
      break;
    case 'closed':
      if (channel) {
        channel.end(message.reason); // noVNC's disconnect event tells the watch
      } else {
        watch.closed(); // the relay could not be opened at all
      }
      break;
    case 'overlay':
      overlay.setState(message.enabled, message.label);
      break;
    case 'agentAction':
      overlay.show(message.mark, message.atMs);
      break;
    case 'clipboard':
    case 'clipboardToScreen':
      clipboard.receive(message);
      break;
  }
}

function render(next: ScreenStatusView): void {
  status = next;
  stats.setHostState(next.state);
  where.textContent = next.headline;
  detail.textContent = next.detail;
  detail.hidden = next.detail === '';
  actions.replaceChildren(...next.actions.map(actionButton));
  controlBar.hidden = next.state !== 'running';
  if (next.state === 'running') {
    watch.start();
  } else {
    // Final states (stopped, sandbox gone, error) retry nothing: their actions are the way on.
    watch.stop();
    dropSession();
    stats.setConnection('idle');
  }
  renderBadge();
}

function renderBadge(): void {
  if (!status || !strings) {
    return;
  }
  badge.removeAttribute('data-attempt');
  if (status.state !== 'running') {
    badge.textContent = status.stateLabel;
    badge.dataset.state = status.state;
    a11y.setState(badge.textContent);
    return;
  }
  const session = watch.view;
  switch (session.kind) {
    case 'live':
      badge.textContent = strings.live;
      badge.dataset.state = 'live';
      break;
    case 'stalled':
      badge.textContent = strings.stalled.replace('{0}', String(session.seconds));
      badge.dataset.state = 'stalled';
      break;
    case 'connecting':
    case 'waiting':
      badge.textContent = session.attempt > 0 ? strings.reconnecting.replace('{0}', String(session.attempt)) : strings.connecting;
      badge.dataset.state = session.attempt > 0 ? 'reconnecting' : 'running';
      badge.dataset.attempt = String(session.attempt);
      break;
    case 'idle':
      badge.textContent = strings.connecting;
      badge.dataset.state = 'running';
  }
  a11y.setState(badge.textContent, session.kind === 'stalled' ? 'stalled' : badge.textContent);
}

function actionButton(action: ViewAction): HTMLButtonElement {
  const button = document.createElement('button');
  button.textContent = strings?.[action] ?? action;
  button.dataset.action = action;
  button.className = action === 'start' || action === 'installHostDesktop' || action === 'switchImage' ? 'primary' : 'secondary';
  button.addEventListener('click', () => post({ type: 'action', action }));
  return button;
}

/** The direct channel could not be dialled: the same request again, now for postMessage. */
function redial(): void {
  if (status?.state === 'running') {
    post({ type: 'disconnect' });
    post({ type: 'connect', origin: transports.connectOrigin() });
  }
}

function openSession(opened: ScreenChannel): void {
  if (rfb || status?.state !== 'running' || !watch.opened()) {
    opened.end(''); // a session nobody waits for any more
    post({ type: 'disconnect' });
    return;
  }
  stats.sessionOpened();
  channel = opened;
  const session = new RFB(screen, channel, { shared: true });
  session.viewOnly = !inControl;
  clipboard.attach(session);
  viewMode.attach(session);
  session.background = 'var(--vscode-editor-background)';
  const sessionPause = new RfbPause(pausable(session, opened));
  opened.holds = (data) => sessionPause.holds(data);
  session.addEventListener('connect', () => {
    stats.setConnection('live');
    watch.connected();
    if (!visible) {
      pauseHidden(); // opened while hidden (a reconnect): quiet until shown
    }
  });
  session.addEventListener('disconnect', () => {
    if (rfb === session) {
      rfb = undefined;
      channel = undefined;
      pause = undefined;
      stats.setConnection('closed');
      showKeyboardBar(false);
      layout.sessionEnded();
      // The relay can end while the screen runs on (a killed exec client, a link blip): the
      // host checks the sandbox and the desktop (a final state stops the watch); else the watch
      // opens a new session to the same desktop after its backoff.
      watch.closed();
    }
  });
  rfb = session;
  pause = sessionPause;
  a11y.relabel();
}

/** The fields of noVNC 1.7's RFB that its pause reads and sets: noVNC has no API for them. */
interface RfbInternals {
  _rfbConnectionState?: string;
  _enabledContinuousUpdates?: boolean;
  _fbWidth?: number;
  _fbHeight?: number;
}

/**
 * The session as its pause sees it. Without the fields (another noVNC) the size reads 0 and the
 * pause does nothing: the host's own (it stops reading the relay) still keeps a hidden view quiet.
 */
function pausable(session: RFB, to: ScreenChannel): PausableSession {
  const inner = session as unknown as RfbInternals;
  const connected = (): boolean => inner._rfbConnectionState === 'connected';
  return {
    send: (message) => to.send(message),
    get continuousUpdates() {
      return inner._enabledContinuousUpdates === true;
    },
    set continuousUpdates(on: boolean) {
      if (typeof inner._enabledContinuousUpdates === 'boolean') {
        inner._enabledContinuousUpdates = on;
      }
    },
    get width() {
      return connected() ? (inner._fbWidth ?? 0) : 0;
    },
    get height() {
      return connected() ? (inner._fbHeight ?? 0) : 0;
    },
  };
}

/** Ends the current session, if any, without telling the watch (it asked, or it is stopped). */
function dropSession(): void {
  const session = rfb;
  rfb = undefined;
  channel = undefined;
  pause = undefined;
  session?.disconnect();
  stats.setConnection('closed');
  showKeyboardBar(false);
  layout.sessionEnded();
}

function showKeyboardBar(shown: boolean): void {
  layout.showKeyboardBar(shown);
  a11y.setCaptured(shown);
}

/**
 * A non-incremental FramebufferUpdateRequest (RFB message 3) of the whole screen, or of its
 * first pixel as a ping that a healthy server always answers. Sent between noVNC's own
 * messages (never inside one: noVNC writes each message in one synchronous call), and only
 * after the handshake, when the server reads requests.
 */
function requestUpdate(ping: boolean): void {
  const canvas = screen.querySelector('canvas');
  if (!channel || !canvas) {
    return;
  }
  const width = ping ? 1 : canvas.width;
  const height = ping ? 1 : canvas.height;
  channel.send(new Uint8Array([3, 0, 0, 0, 0, 0, width >> 8, width & 0xff, height >> 8, height & 0xff]));
}

/**
 * While noVNC's canvas has focus it swallows every key, VS Code's shortcuts included. Releasing
 * moves focus to the screen's container, whose keys the webview forwards to the workbench.
 */
function releaseKeyboard(): void {
  rfb?.blur();
  screen.focus();
  showKeyboardBar(false);
}

/**
 * A resume on the workbench's focus that the host does not confirm with 'visible' within this long
 * was no reveal: paused again, as hidden. (The host reads a hidden viewer's relay after such a
 * request only until it is quiet again: src/core/hiddenRead.ts.)
 */
const UNCONFIRMED_RESUME_MS = 2000;
let unconfirmed: number | undefined;

/**
 * What the host says of the view: shown (`visible` posted, or its word on the direct channel, which
 * comes sooner) or hidden.
 */
function setVisible(shown: boolean, by: 'post' | 'socket'): void {
  visible = shown;
  watch.setVisible(shown);
  if (shown) {
    window.clearTimeout(unconfirmed);
    if (pause?.isPaused) {
      pause.resume();
      stats.setPaused(false, by);
    }
  } else {
    pauseHidden();
  }
}

/** Hidden (the host said so, or a session opened while hidden): paused. */
function pauseHidden(): void {
  window.clearTimeout(unconfirmed);
  pause?.pause();
  stats.setPaused(pause?.isPaused ?? false);
}

// A revealed editor's webview is focused by the workbench itself, sometimes before the host's word
// arrives: the resume goes to the server at once, and turning continuous updates on makes the host
// read the relay again.
function resumeOnFocus(): void {
  if (!pause?.isPaused || visible) {
    return;
  }
  pause.resume();
  stats.setPaused(false, 'focus');
  window.clearTimeout(unconfirmed);
  unconfirmed = window.setTimeout(() => {
    if (!visible) {
      pauseHidden();
    }
  }, UNCONFIRMED_RESUME_MS);
}
window.addEventListener('focus', resumeOnFocus);

releaseButton.addEventListener('click', releaseKeyboard);
controlButton.addEventListener('click', () => {
  const action = controlButton.dataset.action as ViewAction | undefined;
  if (action) {
    post({ type: 'action', action });
  }
});
// Keep the canvas focused until the click lands, or the bar would hide under the pointer.
releaseButton.addEventListener('mousedown', (event) => event.preventDefault());
window.addEventListener(
  'keydown',
  (event) => {
    if (event.ctrlKey && event.altKey && event.shiftKey && event.code === 'KeyK') {
      event.preventDefault();
      event.stopImmediatePropagation();
      releaseKeyboard();
    }
  },
  true,
);
// The bar shows only when keys really go to the screen: a view-only canvas captures nothing.
document.addEventListener('focusin', (event) => {
  showKeyboardBar(inControl && event.target instanceof HTMLCanvasElement && screen.contains(event.target));
});
document.addEventListener('focusout', () => {
  showKeyboardBar(false);
});

// 'ready' asks for a session too when the screen runs (the hello says whether it does). The page's
// first script said it already, unless the page ran without it.
stats.setConnection('connecting');
if (early) {
  window.removeEventListener('message', early.listener);
  for (const event of early.queued.splice(0)) {
    receive(event.data);
  }
} else {
  post({ type: 'ready', origin: transports.connectOrigin() });
}
