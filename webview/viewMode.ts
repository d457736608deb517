// The view mode of one Screen viewer — Fit, 1:1, or Resize the screen to the view — as three
// toggle buttons in the control bar, and what each mode sets on the noVNC session. The view's
// title toolbar offers the same modes (src/commands/viewMode.ts); a pick there arrives as `pick`
// and these buttons show it, so both always agree.
import type RFB from '@novnc/novnc';
import type { ScreenOptionStrings, ViewMode } from '../src/protocol';

const MODES: readonly ViewMode[] = ['fit', 'actual', 'resize'];

/**
 * Fit scales the screen into the view (nothing is sent to the screen). 1:1 draws one screen pixel
 * per view pixel with scrollbars, for sharp text. Resize asks the screen to take the view's size
 * (RFB SetDesktopSize, which Xvnc honours) — only while this viewer holds control: without it the
 * view fits, and the host puts the screen back to its own geometry when control returns to the
 * agent (src/screenResize.ts). The setting `botScreen.viewMode` is the default; a mode picked here
 * holds for this view until it reloads.
 */
export class ViewModeControl {
  private mode: ViewMode = 'fit';
  private picked = false;
  private inControl = false;
  private rfb: RFB | undefined;
  private readonly buttons = new Map<ViewMode, HTMLButtonElement>();

  constructor(
    bar: HTMLElement,
    before: Element | null,
    private readonly screen: HTMLElement,
  ) {
    const group = document.createElement('div');
    group.className = 'view-modes';
    group.setAttribute('role', 'group');
    for (const mode of MODES) {
      const button = document.createElement('button');
      button.className = 'icon view-mode';
      button.dataset.mode = mode;
      button.setAttribute('aria-pressed', 'false');
      button.addEventListener('click', () => this.pick(mode));
      this.buttons.set(mode, button);
      group.append(button);
    }
    bar.insertBefore(group, before);
    this.render();
  }

  setStrings(strings: ScreenOptionStrings): void {
    const group = this.buttons.get('fit')?.parentElement;
    group?.setAttribute('aria-label', strings.viewMode);
    const labels: Record<ViewMode, [string, string]> = {
      fit: [strings.viewFit, strings.viewFitTitle],
      actual: [strings.viewActual, strings.viewActualTitle],
      resize: [strings.viewResize, strings.viewResizeTitle],
    };
    for (const [mode, button] of this.buttons) {
      button.textContent = labels[mode][0];
      button.title = labels[mode][1];
    }
  }

  /** The setting's mode; ignored once the person picked one in this view. */
  setDefault(mode: ViewMode): void {
    if (!this.picked) {
      this.set(mode);
    }
  }

  /** A mode the person picked, here or in the view's title toolbar: it holds over the setting. */
  pick(mode: ViewMode): void {
    this.picked = true;
    this.set(mode);
  }

  /** Call after noVNC's viewOnly was updated: a resize is only requested with control. */
  setInControl(mine: boolean): void {
    this.inControl = mine;
    this.apply();
  }

  attach(rfb: RFB | undefined): void {
    this.rfb = rfb;
    this.apply();
  }

  private set(mode: ViewMode): void {
    this.mode = mode;
    this.apply();
  }

  private apply(): void {
    this.render();
    const rfb = this.rfb;
    if (!rfb) {
      return;
    }
    const resize = this.mode === 'resize' && this.inControl;
    rfb.clipViewport = false;
    // Resize scales too: until the screen has the view's size (and if it refuses), it fits.
    rfb.scaleViewport = this.mode !== 'actual';
    // Setting it again asks again: control may just have arrived for a view already in Resize.
    rfb.resizeSession = resize;
  }

  private render(): void {
    for (const [mode, button] of this.buttons) {
      button.setAttribute('aria-pressed', String(mode === this.mode));
    }
    // What the view does now, for the eye (CSS) and for tests.
    this.screen.dataset.viewMode = this.mode === 'resize' && !this.inControl ? 'fit' : this.mode;
  }
}
