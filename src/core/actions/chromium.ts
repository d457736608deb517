/**
 * The browser on the screen: the sandbox's Chromium, started detached as the desktop user with
 * one profile in that user's home and DevTools on the sandbox's loopback. Used by the agent's
 * open-URL tool and by the person's "Open Browser on Screen" and "Copy DevTools URL" commands, so
 * the agent's browser and the person's are the same browser.
 */
import { httpUrl } from './input';

/** The browser profile lives in the desktop user's home (not /tmp, a tmpfs emptied on stop). */
export const BROWSER_PROFILE = '.config/botscreen-browser';
/** Chromium's DevTools port inside the sandbox (loopback there); forwarded for host tools. */
export const DEVTOOLS_PORT = 9222;

/**
 * Opens the URL in the sandbox's Chromium, detached (setsid) so it outlives the exec. The script
 * is fixed; the URL is its positional parameter "$1", never parsed by the shell (no URL: just
 * the browser). The shell is needed only to find $HOME and to redirect the browser's output away
 * from the exec stream. A second call opens a tab in the browser already running.
 */
const OPEN_URL_SCRIPT = [
  'p="$HOME/' + BROWSER_PROFILE + '"',
  'mkdir -p -- "$p" && chmod 700 -- "$p" || exit 2',
  'exec setsid -f chromium --no-sandbox --disable-dev-shm-usage --no-first-run --no-default-browser-check ' +
    `--remote-debugging-port=${DEVTOOLS_PORT} --user-data-dir="$p" "$@" >"$p.log" 2>&1 </dev/null`,
].join('\n');

export function openUrlArgv(url: string): string[] {
  return ['sh', '-c', OPEN_URL_SCRIPT, 'botscreen-open-url', httpUrl(url)];
}

/** The browser on the screen without a URL (its new-tab page, or the windows it already has). */
export function openBrowserArgv(): string[] {
  return ['sh', '-c', OPEN_URL_SCRIPT, 'botscreen-open-url'];
}
