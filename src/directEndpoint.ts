// The direct channel's endpoint for this extension host: the bridge process that runs the
// loopback server (src/core/bridgeProcess.ts), started on first use, and the address a webview
// dials, as VS Code maps it.
import * as vscode from 'vscode';
import { BridgeProcess } from './core/bridgeProcess';
import { Disposable, toDisposable } from './core/lifecycle';
import type { Logger } from './core/logger';
import { userSetting } from './settings';

/** What a webview needs to dial the server: the origins for its CSP, the base URLs for its socket. */
export interface DirectAddress {
  /** The process that serves the channel and reads the direct viewers' relays. */
  readonly bridge: BridgeProcess;
  /** `ws://host:port` (or `wss://`) of each base, exactly what the webview's `connect-src` allows. */
  readonly origins: readonly string[];
  /**
   * The URLs a token is appended to, in the order the webview tries them: VS Code's external
   * address (with a forwarder's path, e.g. `/proxy/<port>/`), then the loopback address itself
   * when that differs (a browser on this machine reaches it even where the external address
   * leads to a forwarder that is not running).
   */
  readonly bases: readonly string[];
}

/** How long the address may take to resolve (a remote window forwards the port); else postMessage. */
const RESOLVE_TIMEOUT_MS = 3000;

export class DirectEndpoint extends Disposable {
  private address: Promise<DirectAddress | undefined> | undefined;
  /** The bridge process serving the address (a lost one is replaced at the next resolve). */
  private bridge: BridgeProcess | undefined;

  constructor(
    /** The built src/core/bridgeProcessMain.ts (dist/bridge.js). */
    private readonly script: string,
    private readonly log: Logger,
  ) {
    super();
    this.register(toDisposable(() => this.bridge?.dispose()));
  }

  /** The address, or undefined when the setting turns the channel off or it cannot be set up. */
  resolve(): Promise<DirectAddress | undefined> {
    if (userSetting<boolean>('viewer.directChannel') === false) {
      return Promise.resolve(undefined);
    }
    this.address ??= this.setUp();
    return this.address;
  }

  private async setUp(): Promise<DirectAddress | undefined> {
    // A bridge that ends leaves the next viewer to start another (its sessions end with it, and
    // their webviews reconnect; meanwhile a viewer that finds it gone posts).
    const bridge = new BridgeProcess(this.script, this.log, () => {
      if (this.bridge === bridge) {
        this.bridge = undefined;
        this.address = undefined;
      }
    });
    this.bridge = bridge;
    try {
      const port = await bridge.listen();
      // In a remote or web window the webview runs elsewhere: VS Code forwards the port and says where.
      const external = await Promise.race([
        vscode.env.asExternalUri(vscode.Uri.parse(`http://127.0.0.1:${port}`)),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), RESOLVE_TIMEOUT_MS)),
      ]);
      if (!external) {
        throw new Error('the external address did not resolve in time');
      }
      const scheme = external.scheme === 'https' ? 'wss' : 'ws';
      const origin = `${scheme}://${external.authority}`;
      const loopback = `ws://127.0.0.1:${port}`;
      const bases = [...new Set([`${origin}${external.path.replace(/\/?$/, '/')}`, `${loopback}/`])];
      this.log.info(`direct channel: listening on 127.0.0.1:${port}, webviews dial ${bases.join(' or ')}`);
      return { bridge, origins: [...new Set([origin, loopback])], bases };
    } catch (err) {
      bridge.dispose();
      this.log.warn(`direct channel unavailable, viewers use postMessage: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }
}
