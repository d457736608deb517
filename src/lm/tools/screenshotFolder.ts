/** Agent screenshots on disk: private (0700 dir, 0600 files), the newest few kept. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Screenshot } from '../../core/actions/screenshot';

/** How many agent screenshots are kept on disk (oldest removed first). */
const KEEP_SCREENSHOTS = 20;

export class ScreenshotFolder {
  constructor(private readonly dir: string) {}

  save(shot: Screenshot): string {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const file = path.join(this.dir, `screenshot-${stamp}-${Math.random().toString(36).slice(2, 8)}.png`);
    fs.writeFileSync(file, shot.png, { mode: 0o600 });
    this.prune();
    return file;
  }

  private prune(): void {
    try {
      const files = fs
        .readdirSync(this.dir)
        .filter((f) => /^screenshot-.*\.png$/.test(f))
        .sort();
      for (const old of files.slice(0, Math.max(0, files.length - KEEP_SCREENSHOTS))) {
        fs.rmSync(path.join(this.dir, old), { force: true });
      }
    } catch {
      // best effort
    }
  }
}
