// The Screen webview's script: the view's header, actions and bars, and the noVNC session that
// draws the screen over the host's postMessage relay.
import RFB from '@novnc/novnc';
import type { HostToWebview, ScreenStatusView, ViewAction, ViewStrings, WebviewToHost } from '../src/protocol';
import { createChannel, type PostMessageChannel } from './channel';
import { ScreenA11y } from './a11y';
import { ConnectionPanel } from './connectionPanel';
import { StableLayout } from './stableLayout';
import { ScreenStats } from './stats';

declare function acquireVsCodeApi(): { postMessage(message: WebviewToHost): void };

const vscode = acquireVsCodeApi();
const post = (message: WebviewToHost): void => vscode.postMessage(message);

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
const screen = $('screen');
const stats = new ScreenStats($('connection'), (atMs) => post({ type: 'frame', atMs }));
const layout = new StableLayout($('chrome'), $('stage'), keyboardBar);
const a11y = new ScreenA11y(screen, $('announce'));
const panel = new ConnectionPanel($('connection'), $('connection-stats'), $<HTMLButtonElement>('connection-toggle'), stats, () => rfb);

let strings: ViewStrings | undefined;
/** Whether this viewer's input reaches the screen; noVNC stays view-only otherwise. */
let inControl = false;
let status: ScreenStatusView | undefined;
let rfb: RFB | undefined;
let channel: PostMessageChannel | undefined;
let connectRequested = false;
let retryTimer: number | undefined;

window.addEventListener('message', (event: MessageEvent<HostToWebview>) => {
  const message = event.data;
  switch (message.type) {
    case 'hello':
      strings = message.strings;
      releaseButton.textContent = strings.releaseKeyboard;
      keyboardText.textContent = strings.keyboardCaptured;
      panel.setStrings(strings);
      a11y.setStrings(strings);
      render(message.status);
      break;
    case 'status':
      render(message.status);
      break;
    case 'open':
      openSession();
      break;
    case 'control':
      inControl = message.mine;
      stats.setInControl(message.mine);
      controlText.textContent = message.label;
      controlButton.textContent = (message.mine ? strings?.handBack : strings?.takeControl) ?? '';
      controlButton.dataset.action = message.mine ? 'handBack' : 'takeControl';
      controlBar.dataset.mine = String(message.mine);
      a11y.setControl(message.label, message.mine);
      if (rfb) {
        rfb.viewOnly = !message.mine;
      }
      if (!message.mine) {
        showKeyboardBar(false);
      }
      break;
    case 'rfb':
      stats.received(message.data.byteLength);
      channel?.deliver(message.data);
      break;
    case 'closed':
      connectRequested = false;
      channel?.end(message.reason);
      break;
  }
});

function render(next: ScreenStatusView): void {
  status = next;
  stats.setHostState(next.state);
  where.textContent = next.headline;
  detail.textContent = next.detail;
  detail.hidden = next.detail === '';
  actions.replaceChildren(...next.actions.map(actionButton));
  controlBar.hidden = next.state !== 'running';
  if (next.state === 'running') {
    ensureConnected();
  } else {
    closeSession();
  }
  renderBadge();
}

function renderBadge(): void {
  if (!status || !strings) {
    return;
  }
  const live = status.state === 'running' && stats.connection === 'live';
  badge.textContent = status.state !== 'running' ? status.stateLabel : live ? strings.live : strings.connecting;
  badge.dataset.state = live ? 'live' : status.state;
  a11y.setState(badge.textContent);
}

function actionButton(action: ViewAction): HTMLButtonElement {
  const button = document.createElement('button');
  button.textContent = strings?.[action] ?? action;
  button.dataset.action = action;
  button.className = action === 'start' || action === 'installHostDesktop' || action === 'switchImage' ? 'primary' : 'secondary';
  button.addEventListener('click', () => post({ type: 'action', action }));
  return button;
}

function ensureConnected(): void {
  if (rfb || connectRequested) {
    return;
  }
  connectRequested = true;
  stats.setConnection('connecting');
  post({ type: 'connect' });
}

function openSession(): void {
  connectRequested = false;
  if (rfb || status?.state !== 'running') {
    return;
  }
  stats.sessionOpened();
  channel = createChannel(
    (data) => post({ type: 'rfb', data }),
    () => post({ type: 'disconnect' }),
  );
  const session = new RFB(screen, channel, { shared: true });
  session.scaleViewport = true;
  session.viewOnly = !inControl;
  session.resizeSession = false;
  session.background = 'var(--vscode-editor-background)';
  session.addEventListener('connect', () => {
    stats.setConnection('live');
    renderBadge();
  });
  session.addEventListener('disconnect', () => {
    if (rfb === session) {
      rfb = undefined;
      channel = undefined;
      stats.setConnection('closed');
      showKeyboardBar(false);
      layout.sessionEnded();
      renderBadge();
      // The relay can end while the screen runs on (a hiccup, a killed exec client): the host
      // checks the sandbox; if it is still there, try again shortly.
      window.clearTimeout(retryTimer);
      retryTimer = window.setTimeout(() => status?.state === 'running' && ensureConnected(), 1000);
    }
  });
  rfb = session;
  a11y.relabel();
}

function closeSession(): void {
  window.clearTimeout(retryTimer);
  connectRequested = false;
  const session = rfb;
  rfb = undefined;
  channel = undefined;
  session?.disconnect();
  stats.setConnection('idle');
  showKeyboardBar(false);
  layout.sessionEnded();
}

function showKeyboardBar(shown: boolean): void {
  layout.showKeyboardBar(shown);
  a11y.setCaptured(shown);
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

post({ type: 'ready' });
