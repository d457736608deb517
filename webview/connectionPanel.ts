// The connection panel: a small overlay in the Screen view, opened by the info button in its
// header, that shows how the RFB session is doing (state, JPEG quality and compression level,
// frames drawn per second, bytes per second, totals, time to first frame, last frame age,
// reconnects, transport) for users who tune the link. Its numbers come from ./stats.ts; its labels from the
// host (ViewStrings), like every other word in the view.
import type { ViewStrings } from '../src/protocol';
import type { TransportKind } from './channel';
import type { Connection, ScreenStats } from './stats';

/** Often enough to read as live, rarely enough to cost nothing next to the drawing. */
const REFRESH_MS = 500;

type Row = 'connection' | 'quality' | 'frameRate' | 'rate' | 'total' | 'firstFrame' | 'lastFrame' | 'reconnects' | 'transport';
const ROWS: readonly Row[] = ['connection', 'quality', 'frameRate', 'rate', 'total', 'firstFrame', 'lastFrame', 'reconnects', 'transport'];

/** What noVNC exposes of the link's tuning (public RFB properties; it has no "encoding in use"). */
export interface Tuning {
  readonly qualityLevel: number;
  readonly compressionLevel: number;
}

export class ConnectionPanel {
  private strings: ViewStrings | undefined;
  private readonly values = new Map<Row, HTMLElement>();
  private timer: number | undefined;
  /** The previous refresh's counters, for the rates. */
  private last = { at: 0, frames: 0, bytes: 0, connects: 0 };
  private readonly number = new Intl.NumberFormat(document.documentElement.lang || undefined, { maximumFractionDigits: 1 });
  private readonly precise = new Intl.NumberFormat(document.documentElement.lang || undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });

  constructor(
    private readonly panel: HTMLElement,
    private readonly list: HTMLElement,
    private readonly toggle: HTMLButtonElement,
    private readonly stats: ScreenStats,
    private readonly tuning: () => Tuning | undefined,
  ) {
    toggle.addEventListener('click', () => this.setShown(panel.hidden));
    // Escape on the button or inside the panel closes it (on the canvas, Escape is the desktop's).
    for (const element of [toggle, panel]) {
      element.addEventListener('keydown', (event) => {
        if (event.key === 'Escape' && !panel.hidden) {
          event.preventDefault();
          this.setShown(false);
          toggle.focus();
        }
      });
    }
  }

  /** The labels, from the host's hello; the rows are built once they are known. */
  setStrings(strings: ViewStrings): void {
    this.strings = strings;
    this.toggle.title = strings.connectionInfo;
    this.toggle.setAttribute('aria-label', strings.connectionInfo);
    this.panel.setAttribute('aria-label', strings.connectionInfo);
    const labels: Record<Row, string> = {
      connection: strings.statConnection,
      quality: strings.statQuality,
      frameRate: strings.statFrameRate,
      rate: strings.statRate,
      total: strings.statTotal,
      firstFrame: strings.statFirstFrame,
      lastFrame: strings.statLastFrame,
      reconnects: strings.statReconnects,
      transport: strings.statTransport,
    };
    this.values.clear();
    this.list.replaceChildren(...ROWS.flatMap((row) => {
      const term = document.createElement('dt');
      term.textContent = labels[row];
      const value = document.createElement('dd');
      value.dataset.row = row;
      this.values.set(row, value);
      return [term, value];
    }));
    if (!this.panel.hidden) {
      this.refresh();
    }
  }

  /** Shown, the panel refreshes its text every REFRESH_MS; hidden, it does no work at all. */
  private setShown(shown: boolean): void {
    this.panel.hidden = !shown;
    this.toggle.setAttribute('aria-expanded', String(shown));
    window.clearInterval(this.timer);
    this.timer = undefined;
    if (shown) {
      this.last = { at: 0, frames: 0, bytes: 0, connects: 0 };
      this.refresh();
      this.timer = window.setInterval(() => this.refresh(), REFRESH_MS);
    }
  }

  private refresh(): void {
    const s = this.stats;
    const now = Date.now();
    // Rates over the time since the previous refresh; a new session restarts its frame count.
    const span = (now - this.last.at) / 1000;
    const measured = this.last.at > 0 && span > 0;
    const frames = s.connects === this.last.connects ? s.framesDrawn - this.last.frames : s.framesDrawn;
    const tuning = this.tuning();
    this.show('connection', this.connectionLabel(s.connection));
    this.show('quality', tuning ? `${tuning.qualityLevel} / ${tuning.compressionLevel}` : '–');
    this.show('frameRate', measured ? this.number.format(frames / span) : '–');
    this.show('rate', measured ? this.precise.format((s.bytesIn - this.last.bytes) / span / 1e6) : '–');
    this.show('total', this.precise.format(s.bytesIn / 1e6));
    this.show('firstFrame', s.firstFrameAt > 0 ? this.number.format(s.firstFrameAt - s.openedAt) : '–');
    this.show('lastFrame', s.lastFrameAt > 0 ? this.number.format((now - s.lastFrameAt) / 1000) : '–');
    this.show('reconnects', this.number.format(Math.max(0, s.connects - 1)));
    this.show('transport', this.transportLabel(s.transport));
    this.last = { at: now, frames: s.framesDrawn, bytes: s.bytesIn, connects: s.connects };
  }

  private show(row: Row, text: string): void {
    const value = this.values.get(row);
    if (value && value.textContent !== text) {
      value.textContent = text;
    }
  }

  private transportLabel(transport: TransportKind | undefined): string {
    if (!transport) {
      return '–';
    }
    return (transport === 'direct' ? this.strings?.transportDirect : this.strings?.transportMessages) ?? transport;
  }

  private connectionLabel(connection: Connection): string {
    const strings = this.strings;
    if (!strings) {
      return connection;
    }
    switch (connection) {
      case 'idle':
        return strings.notConnected;
      case 'connecting':
        return strings.connecting;
      case 'live':
        return strings.live;
      case 'closed':
        return strings.disconnected;
    }
  }
}
