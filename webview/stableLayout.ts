// Keeps the screen's canvas still under the pointer. noVNC turns a pointer event into screen
// coordinates from the canvas's position at that moment, so anything that moves the canvas
// between the press and the position read (the keyboard bar appearing as the click focuses the
// canvas) makes the click land elsewhere on the screen. Three rules: the keyboard bar floats over
// the stage and takes no layout space; the control bar's height does not depend on who holds
// control (media/screen.css: its texts keep one line, its buttons keep their widths), so a
// control change never moves the canvas; and the rest of the chrome above the stage (header,
// actions, detail) keeps its height while the pointer is over the live canvas's stage or a
// button pressed there is still down; a change in between shows once the pointer has left, or
// at once when the session ends.

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
    // Where the pointer is, by its coordinates rather than by the element under it: while a
    // button is down over the canvas noVNC lays a page-wide capture element over everything
    // (its setCapture emulation), and the stage's own enter and leave events would say the
    // pointer left while it rests on the canvas. Capture phase: noVNC stops the canvas's events.
    // What belongs to the chrome but reaches over the stage (the Send keys menu) is not the stage.
    const track = (event: PointerEvent): void => {
      const box = stage.getBoundingClientRect();
      const inChrome = event.target instanceof Node && chrome.contains(event.target);
      this.over = !inChrome && event.clientX >= box.left && event.clientX < box.right && event.clientY >= box.top && event.clientY < box.bottom;
      if (this.over) {
        this.hold();
      } else {
        this.release();
      }
    };
    window.addEventListener('pointermove', track, true);
    window.addEventListener('pointerover', track, true);
    // No related target: the pointer left the page (the webview's frame) altogether.
    window.addEventListener('pointerout', (event) => {
      if (event.relatedTarget === null) {
        this.over = false;
        this.release();
      }
    }, true);
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
