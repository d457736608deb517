// The "Send keys" menu of a Screen viewer: chords the browser, VS Code or the operating system
// would take for themselves (Ctrl+Alt+Del, Alt+Tab, Ctrl+W, F1…), sent to the screen as real
// press and release pairs through noVNC. Offered only while this viewer holds control (the host's
// input gate drops them otherwise anyway).
import type RFB from '@novnc/novnc';
import type { ScreenOptionStrings } from '../src/protocol';

/** One key: its X keysym and the KeyboardEvent.code of the key that types it on a US keyboard. */
type Key = readonly [keysym: number, code: string];

const CTRL: Key = [0xffe3, 'ControlLeft'];
const ALT: Key = [0xffe9, 'AltLeft'];
const SUPER: Key = [0xffeb, 'MetaLeft'];
const fKey = (n: number): Key => [0xffbe + n - 1, `F${n}`];

/** The chords, as they are labelled everywhere (key names are not translated, as in VS Code). */
export const CHORDS: readonly (readonly [label: string, keys: readonly Key[]])[] = [
  ['Ctrl+Alt+Del', [CTRL, ALT, [0xffff, 'Delete']]],
  ['Ctrl+Esc', [CTRL, [0xff1b, 'Escape']]],
  ['Alt+Tab', [ALT, [0xff09, 'Tab']]],
  ['Alt+F4', [ALT, fKey(4)]],
  ['Super', [SUPER]],
  ['Print', [[0xff61, 'PrintScreen']]],
  ['Ctrl+W', [CTRL, [0x77, 'KeyW']]],
  ['Ctrl+T', [CTRL, [0x74, 'KeyT']]],
  ['Ctrl+N', [CTRL, [0x6e, 'KeyN']]],
  ...Array.from({ length: 12 }, (_, i): [string, Key[]] => [`F${i + 1}`, [fKey(i + 1)]]),
];

/**
 * Presses the keys in order and releases them in reverse, as fingers would: a chord the screen
 * sees whole, and nothing left down.
 */
export function sendChord(rfb: RFB, keys: readonly Key[]): void {
  for (const [keysym, code] of keys) {
    rfb.sendKey(keysym, code, true);
  }
  for (const [keysym, code] of [...keys].reverse()) {
    rfb.sendKey(keysym, code, false);
  }
}

/** The least room between the menu and the view's edges. */
const EDGE_PX = 4;

export class SendKeysMenu {
  private readonly button = document.createElement('button');
  private readonly menu = document.createElement('div');
  private inControl = false;

  constructor(
    bar: HTMLElement,
    before: Element | null,
    private readonly session: () => RFB | undefined,
  ) {
    const wrap = document.createElement('div');
    wrap.className = 'send-keys';
    this.button.className = 'icon send-keys-button';
    this.button.id = 'send-keys';
    this.button.setAttribute('aria-haspopup', 'menu');
    this.button.setAttribute('aria-expanded', 'false');
    this.button.setAttribute('aria-controls', 'send-keys-menu');
    this.menu.id = 'send-keys-menu';
    this.menu.className = 'send-keys-menu';
    this.menu.setAttribute('role', 'menu');
    this.menu.hidden = true;
    for (const [label, keys] of CHORDS) {
      const item = document.createElement('button');
      item.setAttribute('role', 'menuitem');
      item.dataset.chord = label;
      item.textContent = label;
      // The canvas keeps the focus (and the keys) while the menu is used with the mouse.
      item.addEventListener('mousedown', (event) => event.preventDefault());
      item.addEventListener('click', () => {
        const rfb = this.session();
        if (rfb && this.inControl) {
          sendChord(rfb, keys);
        }
        this.close();
      });
      this.menu.append(item);
    }
    this.button.addEventListener('mousedown', (event) => event.preventDefault());
    this.button.addEventListener('click', () => (this.menu.hidden ? this.open() : this.close()));
    this.menu.addEventListener('keydown', (event) => this.onMenuKey(event));
    window.addEventListener('resize', () => this.close()); // its place was worked out for the old size
    document.addEventListener('mousedown', (event) => {
      if (!wrap.contains(event.target as Node)) {
        this.close();
      }
    });
    wrap.append(this.button, this.menu);
    bar.insertBefore(wrap, before);
    this.render();
  }

  setStrings(strings: ScreenOptionStrings): void {
    this.button.textContent = strings.sendKeys;
    this.button.dataset.title = strings.sendKeysTitle;
    this.button.dataset.disabledTitle = strings.sendKeysDisabled;
    this.menu.setAttribute('aria-label', strings.sendKeys);
    this.render();
  }

  setInControl(mine: boolean): void {
    this.inControl = mine;
    if (!mine) {
      this.close();
    }
    this.render();
  }

  private render(): void {
    this.button.disabled = !this.inControl;
    this.button.title = (this.inControl ? this.button.dataset.title : this.button.dataset.disabledTitle) ?? '';
  }

  private open(): void {
    if (!this.inControl) {
      return;
    }
    this.menu.hidden = false;
    this.place();
    this.button.setAttribute('aria-expanded', 'true');
    if (document.activeElement === this.button) {
      this.menu.querySelector<HTMLButtonElement>('[role="menuitem"]')?.focus(); // opened from the keyboard
    }
  }

  /**
   * Under its button, right-aligned with it and kept inside the view. Fixed, not absolute: the
   * chrome the menu drops from clips what leaves it while its height is held under a resting
   * pointer (webview/stableLayout.ts), and the menu reaches down over the screen.
   */
  private place(): void {
    const button = this.button.getBoundingClientRect();
    const width = this.menu.offsetWidth;
    const room = document.documentElement.clientWidth - width - EDGE_PX;
    this.menu.style.top = `${button.bottom}px`;
    this.menu.style.left = `${Math.max(EDGE_PX, Math.min(button.right - width, room))}px`;
  }

  private close(): void {
    if (!this.menu.hidden) {
      this.menu.hidden = true;
      this.button.setAttribute('aria-expanded', 'false');
    }
  }

  /** Up and Down move between the items, Escape closes the menu and returns to its button. */
  private onMenuKey(event: KeyboardEvent): void {
    const items = [...this.menu.querySelectorAll<HTMLButtonElement>('[role="menuitem"]')];
    const at = items.indexOf(document.activeElement as HTMLButtonElement);
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const next = (at + (event.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length;
      items[next]?.focus();
    } else if (event.key === 'Escape') {
      event.preventDefault();
      this.close();
      this.button.focus();
    }
  }
}
