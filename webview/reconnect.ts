// The Screen view's reconnect policy: when to open the next RFB session after one ended (backoff),
// and how to tell a session that works from one that connected but draws nothing (black screen)
// or stopped receiving (stalled). Free of the DOM and of noVNC, with the clock passed in, so a
// plain Node test drives it (test/unit/reconnect.test.ts); webview/main.ts wires it to the session.

/** Waits before the 1st, 2nd, ... retry; the last one repeats. */
export const RETRY_DELAYS_MS: readonly number[] = [500, 1000, 2000, 4000, 8000, 10_000];
/** A session whose relay has not opened, or whose RFB handshake has not finished, by then is given up. */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Connected but nothing drawn for this long: a black screen, asked once for a full update. */
export const FIRST_FRAME_TIMEOUT_MS = 5000;
/** No byte for this long while drawing: ask the server for a tiny update to prove the link. */
export const QUIET_PING_MS = 2000;
/** No byte for this long despite the pings: the view says the link is stalled. */
export const STALL_MS = 5000;
/** Stalled this long: the link is taken for dead and a new session is opened. */
export const STALL_RECONNECT_MS = 30_000;
/** How often the timeouts above are checked while a session is wanted. */
export const TICK_MS = 500;

/** What the view shows of the session. */
export type SessionView =
  /** No session is wanted (the screen does not run). */
  | { readonly kind: 'idle' }
  /** A session is being opened; `attempt` 0 is the first, n the n-th retry since frames were last drawn. */
  | { readonly kind: 'connecting'; readonly attempt: number }
  /** The previous session ended; retry number `attempt` opens after `delayMs`. */
  | { readonly kind: 'waiting'; readonly attempt: number; readonly delayMs: number }
  | { readonly kind: 'live' }
  /** Drawing, but no byte has arrived for `seconds`. */
  | { readonly kind: 'stalled'; readonly seconds: number };

export interface Clock {
  now(): number;
  /** Runs `run` after `ms`; the returned function cancels it. */
  after(ms: number, run: () => void): () => void;
  /** Runs `run` every `ms`; the returned function stops it. */
  every(ms: number, run: () => void): () => void;
}

/** What the watch asks of the session it watches. */
export interface SessionHooks {
  /** Open a new session (ask the host for a relay). */
  connect(): void;
  /** End the current session; its end comes back as `closed`. */
  drop(): void;
  /** Ask the server for the whole framebuffer, not only what changed. */
  fullRefresh(): void;
  /** Ask the server for a tiny update, so a healthy link answers within a round trip. */
  ping(): void;
  /** A line for the extension's log: why the watch acted. */
  log(message: string): void;
  /** What the view shows changed. */
  changed(view: SessionView): void;
}

type Phase = 'idle' | 'requested' | 'handshake' | 'noFrame' | 'drawing' | 'waiting';

/**
 * Watches the one session of a view. Retries back off (RETRY_DELAYS_MS); a session that drew
 * frames resets the count, so a relay killed now and then always comes back after half a second.
 * While the view is hidden the host does not read the relay, so silence means nothing then and
 * no timeout runs.
 */
export class SessionWatch {
  private phase: Phase = 'idle';
  /** Retries since the last session that drew frames. */
  private attempt = 0;
  /** When the current phase's clock started (handshake, first frame, last byte). */
  private since = 0;
  private lastDataAt = 0;
  private lastPingAt = 0;
  private refreshedAt = 0;
  private stillBlackLogged = false;
  private stalledSeconds = 0;
  private visible = true;
  private cancelRetry: (() => void) | undefined;
  private stopTick: (() => void) | undefined;
  private shown: SessionView = { kind: 'idle' };

  constructor(
    private readonly clock: Clock,
    private readonly hooks: SessionHooks,
  ) {}

  get view(): SessionView {
    return this.shown;
  }

  /** The screen runs: open a session unless one is open or on its way. */
  start(): void {
    if (this.phase !== 'idle') {
      return;
    }
    this.attempt = 0;
    this.request();
  }

  /** The screen does not run (stopped, gone) or the view goes: no session, no retry. */
  stop(): void {
    this.phase = 'idle';
    this.cancelRetry?.();
    this.cancelRetry = undefined;
    this.stopTick?.();
    this.stopTick = undefined;
    this.show({ kind: 'idle' });
  }

  /**
   * The host's relay runs: the handshake starts. False when no session was asked for (a late
   * answer to a request given up on): that relay is to be closed, not used.
   */
  opened(): boolean {
    if (this.phase !== 'requested') {
      return false;
    }
    this.enter('handshake');
    return true;
  }

  /** The RFB handshake finished; now a frame must follow. */
  connected(): void {
    if (this.phase === 'handshake') {
      this.refreshedAt = 0;
      this.stillBlackLogged = false;
      this.enter('noFrame');
    }
  }

  frameDrawn(): void {
    if (this.phase === 'noFrame') {
      if (this.refreshedAt > 0) {
        this.hooks.log('the screen drew after the full framebuffer request');
      }
      this.attempt = 0;
      this.enter('drawing');
      this.show({ kind: 'live' });
    }
  }

  dataReceived(): void {
    this.lastDataAt = this.clock.now();
    if (this.phase === 'drawing' && this.shown.kind === 'stalled') {
      this.hooks.log(`data from the screen again after ${this.stalledSeconds} s without`);
      this.show({ kind: 'live' });
    }
  }

  /** The session ended (or could not be opened): the next one opens after the backoff delay. */
  closed(): void {
    if (this.phase === 'idle' || this.phase === 'waiting') {
      return;
    }
    this.phase = 'waiting';
    this.attempt++;
    const delayMs = RETRY_DELAYS_MS[Math.min(this.attempt, RETRY_DELAYS_MS.length) - 1];
    this.show({ kind: 'waiting', attempt: this.attempt, delayMs });
    this.cancelRetry?.();
    this.cancelRetry = this.clock.after(delayMs, () => {
      this.cancelRetry = undefined;
      if (this.phase === 'waiting') {
        this.request();
      }
    });
  }

  /** Hidden, the host holds the bytes back: timeouts pause, and restart when shown again. */
  setVisible(visible: boolean): void {
    if (visible && !this.visible) {
      const now = this.clock.now();
      this.since = now;
      this.lastDataAt = now;
      this.refreshedAt = this.refreshedAt > 0 ? now : 0;
    }
    this.visible = visible;
  }

  private request(): void {
    this.enter('requested');
    this.show({ kind: 'connecting', attempt: this.attempt });
    this.stopTick ??= this.clock.every(TICK_MS, () => this.tick());
    this.hooks.connect();
  }

  private enter(phase: Phase): void {
    this.phase = phase;
    const now = this.clock.now();
    this.since = now;
    this.lastDataAt = now;
    this.lastPingAt = now;
  }

  private tick(): void {
    if (!this.visible) {
      return;
    }
    const now = this.clock.now();
    switch (this.phase) {
      case 'requested':
      case 'handshake':
        if (now - this.since >= HANDSHAKE_TIMEOUT_MS) {
          this.giveUp(`no ${this.phase === 'requested' ? 'relay' : 'RFB handshake'} within ${HANDSHAKE_TIMEOUT_MS / 1000} s`);
        }
        break;
      case 'noFrame':
        if (this.refreshedAt === 0 && now - this.since >= FIRST_FRAME_TIMEOUT_MS) {
          this.hooks.log(`black screen: connected ${FIRST_FRAME_TIMEOUT_MS / 1000} s ago but nothing drawn; asking for a full framebuffer update`);
          this.refreshedAt = now;
          this.hooks.fullRefresh();
        } else if (this.refreshedAt > 0 && !this.stillBlackLogged && now - this.refreshedAt >= FIRST_FRAME_TIMEOUT_MS) {
          // Retried once, as promised; the session stays (its relay is alive, the handshake
          // worked), so a slow first frame on a loaded machine still arrives.
          this.stillBlackLogged = true;
          this.hooks.log(`black screen: still nothing drawn ${FIRST_FRAME_TIMEOUT_MS / 1000} s after the full framebuffer request`);
        }
        break;
      case 'drawing':
        this.watchData(now);
        break;
    }
  }

  private watchData(now: number): void {
    const quiet = now - this.lastDataAt;
    if (quiet >= QUIET_PING_MS && now - this.lastPingAt >= QUIET_PING_MS) {
      this.lastPingAt = now;
      this.hooks.ping();
    }
    if (quiet >= STALL_RECONNECT_MS) {
      this.giveUp(`no data from the screen for ${Math.floor(quiet / 1000)} s`);
    } else if (quiet >= STALL_MS) {
      const seconds = Math.floor(quiet / 1000);
      if (this.shown.kind !== 'stalled') {
        this.hooks.log(`stalled: no data from the screen for ${seconds} s`);
      }
      if (this.shown.kind !== 'stalled' || this.stalledSeconds !== seconds) {
        this.stalledSeconds = seconds;
        this.show({ kind: 'stalled', seconds });
      }
    }
  }

  private giveUp(why: string): void {
    this.hooks.log(`${why}; reconnecting`);
    this.hooks.drop();
    // drop() normally reports the end through closed(); make sure the retry is scheduled anyway.
    this.closed();
  }

  private show(view: SessionView): void {
    this.shown = view;
    this.hooks.changed(view);
  }
}
