// What the Screen view tells assistive technology: the canvas is labelled with the screen's
// state and who holds control (an image while view-only; an application, in the Tab order, while
// this viewer's keys reach it), and changes of state, of control and of where the keys go are
// announced through a polite live region, once each.
import type { ViewStrings } from '../src/protocol';

export class ScreenA11y {
  private strings: ViewStrings | undefined;
  private state = '';
  private stateKind = '';
  private control = '';
  private inControl = false;
  private captured = false;
  private said = '';

  constructor(
    private readonly screen: HTMLElement,
    private readonly region: HTMLElement,
  ) {}

  setStrings(strings: ViewStrings): void {
    this.strings = strings;
    this.relabel();
  }

  /**
   * The screen's state as the badge words it ("live", "connecting", "stopped"…). The label
   * follows every change; only a new `kind` is announced, so a stall's counting seconds
   * ("No data for 6 s", "7 s"…) are said once, not every second.
   */
  setState(state: string, kind = state): void {
    if (state !== this.state) {
      this.state = state;
      this.relabel();
      if (kind !== this.stateKind) {
        this.say(this.label());
      }
    }
    this.stateKind = kind;
  }

  /** Who holds control, as the control bar words it, and whether it is this viewer. */
  setControl(label: string, mine: boolean): void {
    if (label !== this.control || mine !== this.inControl) {
      this.control = label;
      this.inControl = mine;
      this.relabel();
      this.say(label);
    }
  }

  /** Whether the canvas has the keyboard (the keyboard bar shows). */
  setCaptured(captured: boolean): void {
    if (captured !== this.captured) {
      this.captured = captured;
      this.say((captured ? this.strings?.keyboardCaptured : this.strings?.keyboardReleased) ?? '');
    }
  }

  /** Something else worth hearing (the live overlay's agent actions, rate-limited there). */
  announce(text: string): void {
    this.say(text);
  }

  /** Labels the current session's canvas (noVNC makes a new one for each session). */
  relabel(): void {
    const canvas = this.screen.querySelector('canvas');
    if (!canvas) {
      return;
    }
    canvas.setAttribute('role', this.inControl ? 'application' : 'img');
    canvas.setAttribute('aria-label', this.label());
    // noVNC keeps its canvas out of the Tab order; a keyboard user reaches it while in control.
    canvas.tabIndex = this.inControl ? 0 : -1;
  }

  private label(): string {
    const template = this.strings?.screenLabel ?? '{0}. {1}';
    return template.replace('{0}', this.state).replace('{1}', this.control).trim();
  }

  private say(text: string): void {
    if (text !== '' && text !== this.said) {
      this.said = text;
      this.region.textContent = text;
    }
  }
}
