/**
 * The screen's size after a person's "Resize the screen to the view": putting it back to the
 * geometry the screen was started with when control returns to the agent, inside the sandbox
 * with the screen's DISPLAY (xrandr and xdpyinfo: x11-xserver-utils and x11-utils, which every
 * desktop image and SSH host has, see README).
 *
 * Xvnc (TigerVNC) makes a RandR mode for each size a viewer asks for (SetDesktopSize); going back
 * takes the output's mode and the framebuffer together (`--fb` alone is refused while the output
 * is larger). A geometry that is in no mode list (not a common size) gets a mode of its own first.
 */
import type { PublishedScreen } from '../launcher';
import type { Lease } from '../lease';
import type { Logger } from '../logger';
import { errorMessage } from '../problem';
import type { RfbInputGate } from '../rfbInputGate';
import { run } from '../runner';
import type { Sandbox } from '../sandbox';
import { parseGeometry, type Geometry } from '../validate';
import { displayEnv, EXEC_TIMEOUT_MS, must, withEnv } from './sessionExec';

/**
 * Sets the first connected output and the framebuffer to $1x$2; the size arrives as positional
 * parameters (numbers checked by parseGeometry before), never inside the script text.
 */
const RESTORE_SCRIPT = `
out=$(xrandr --query | awk '$2 == "connected" { print $1; exit }')
[ -n "$out" ] || { echo "no connected RandR output" >&2; exit 1; }
mode="$1x$2"
if ! xrandr --output "$out" --mode "$mode" --fb "$mode" 2>/dev/null; then
  xrandr --newmode "$mode" 60 "$1" "$1" "$1" "$1" "$2" "$2" "$2" "$2" 2>/dev/null
  xrandr --addmode "$out" "$mode" && xrandr --output "$out" --mode "$mode" --fb "$mode" || exit 1
fi
xdpyinfo | awk '/dimensions:/ { print $2; exit }'
`;

/** argv that puts the screen back to `size` and prints the size it then has (`WxH`). */
export function restoreSizeArgv(size: Geometry): string[] {
  return ['sh', '-c', RESTORE_SCRIPT, 'botscreen-restore-size', String(size.width), String(size.height)];
}

type Target = { readonly sandbox: Sandbox; readonly screen: PublishedScreen };

/**
 * Puts the screen back to the geometry it was started with (the one the launcher published);
 * returns the size it has afterwards. Throws when the published geometry is not a size or
 * xrandr fails (the caller logs it).
 */
export async function restoreScreenSize(target: Target): Promise<Geometry> {
  const size = parseGeometry(target.screen.geometry);
  if (!size) {
    throw new Error(`the screen published ${JSON.stringify(target.screen.geometry)}, not a size`);
  }
  const what = 'restoring the screen size';
  const argv = restoreSizeArgv(size);
  const result = await run(target.sandbox.exec(withEnv(displayEnv(target.screen), argv), { interactive: false }), { timeoutMs: EXEC_TIMEOUT_MS });
  must(what, result);
  const reported = result.stdout.trim();
  if (reported !== `${size.width}x${size.height}`) {
    throw new Error(`${what}: the screen is ${JSON.stringify(reported.slice(0, 40))} afterwards, not ${size.width}x${size.height}`);
  }
  return size;
}

/**
 * Restores of the screen size under way in this extension host. The agent's actions wait for
 * them (see agentActionRunner.ts), so an action that starts right after the hand back never
 * acts on the size the person's view had: its screenshot and its click see the same screen.
 */
export class PendingRestores {
  private readonly pending = new Set<Promise<unknown>>();

  track<T>(restore: Promise<T>): Promise<T> {
    const settled = restore.then(
      () => undefined,
      () => undefined,
    );
    this.pending.add(settled);
    void settled.then(() => this.pending.delete(settled));
    return restore;
  }

  /** Resolves once every restore started so far has ended (succeeded or failed). */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}

export const pendingRestores = new PendingRestores();

/**
 * "Resize the screen to the view" lasts while a person holds control: once this viewer's gate let
 * a SetDesktopSize through, the screen goes back to the geometry it was started with as soon as
 * the agent holds control again (xrandr in the sandbox; agent actions wait for it).
 */
export class ResizeRestore {
  private resized = false;

  constructor(
    private readonly runningScreen: () => Target | undefined,
    private readonly log: Logger,
  ) {}

  /** After each push through the gate. */
  noteGate(gate: RfbInputGate): void {
    this.resized ||= gate.resizedScreen;
  }

  /** On each change of the lease. */
  onControl(lease: Lease): void {
    if (!this.resized || lease.holder !== 'agent') {
      return;
    }
    this.resized = false;
    const target = this.runningScreen();
    if (!target) {
      return; // stopped: the next start has the configured geometry
    }
    void pendingRestores.track(restoreScreenSize(target)).then(
      (size) => this.log.info(`control went back to the agent: the screen is ${size.width}x${size.height} again`),
      (err) => this.log.warn(`could not put the screen back to ${target.screen.geometry}: ${errorMessage(err)}`),
    );
  }
}
