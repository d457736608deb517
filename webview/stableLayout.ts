// Keeps the screen's canvas still under the pointer. noVNC turns a pointer event into screen
// coordinates from the canvas's position at that moment, so anything that moves the canvas
// between the press and the position read (the keyboard bar appearing as the click focuses the
// canvas) makes the click land elsewhere on the screen. Two rules: the keyboard bar floats over
// the stage and takes no layout space, and the chrome above the stage (header, actions, detail,
// control bar) keeps its height while the pointer is over the live canvas's stage or a button
// pressed there is still down; a change in between shows once the pointer has left, or at once
// when the session ends.

/** Room between the canvas and the keyboard bar, and between the bar and the stage's edge. */
const GAP_PX = 6;

export class StableLayout {
  private over = false;
  private pressed = false;
  private held = false;
  private readonly resized = new ResizeObserver(() => this.placeKeyboardBar());

  constructor(
    private readonly chrome: HTMLElement,
    private readonly stage: HTMLElement,
    private readonly keyboardBar: HTMLElement,
  ) {
    stage.addEventListener('pointerenter', () => {
      this.over = true;
      this.hold();
    });
    stage.addEventListener('pointerleave', () => {
      this.over = false;
      this.release();
    });
    // Capture phase: noVNC stops the canvas's events from bubbling.
    window.addEventListener('pointerdown', (event) => {
      if (event.target instanceof Node && stage.contains(event.target)) {
        this.pressed = true;
        this.hold();
      }
    }, true);
    window.addEventListener('pointerup', () => {
      this.pressed = false;
      this.release();
    }, true);
    this.resized.observe(stage);
  }

  /** Shows or hides the keyboard bar, placed below the canvas when there is room, else over its foot. */
  showKeyboardBar(shown: boolean): void {
    this.keyboardBar.hidden = !shown;
    const canvas = this.stage.querySelector('canvas');
    if (shown && canvas) {
      this.resized.observe(canvas); // a new session's canvas, or the screen's size changed
    }
    this.placeKeyboardBar();
  }

  private placeKeyboardBar(): void {
    if (this.keyboardBar.hidden) {
      return;
    }
    const stage = this.stage.getBoundingClientRect();
    const bar = this.keyboardBar.offsetHeight;
    const lowest = Math.max(0, stage.height - bar - GAP_PX);
    const canvas = this.stage.querySelector('canvas')?.getBoundingClientRect();
    const below = canvas ? canvas.bottom - stage.top + GAP_PX : lowest;
    this.keyboardBar.style.top = `${Math.min(below, lowest)}px`;
  }

  /** The session ended (its canvas is gone): the chrome shows what it has to say at once. */
  sessionEnded(): void {
    this.over = false;
    this.pressed = false;
    this.release();
  }

  private hold(): void {
    // Only a live canvas needs holding; without one, a status change must show at once.
    if (this.held || !this.stage.querySelector('canvas')) {
      return;
    }
    this.held = true;
    this.chrome.style.height = `${this.chrome.getBoundingClientRect().height}px`;
    this.chrome.dataset.held = 'true';
  }

  private release(): void {
    if (!this.held || this.over || this.pressed) {
      return;
    }
    this.held = false;
    this.chrome.style.height = '';
    delete this.chrome.dataset.held;
  }
}
