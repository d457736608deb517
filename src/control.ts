// Who controls the screen, as this window sees it: the lease cached for the input gate, with context keys.
import * as vscode from 'vscode';
import { LeaseStore, viewerHolds, type Lease } from './core/lease';
import { Disposable } from './core/lifecycle';

/**
 * Who controls the screen, for this window: the lease on disk, cached so the input gate can ask
 * on every message without touching the disk, refreshed after our own transitions and when the
 * file changes, for other windows' (the file is the truth shared by every process). Nothing
 * runs on a timer while nobody changes hands.
 */
export class Control extends Disposable {
  private lease: Lease;
  private readonly changed = this.register(new vscode.EventEmitter<Lease>());
  readonly onDidChange = this.changed.event;

  constructor(readonly store: LeaseStore) {
    super();
    this.lease = store.read();
    this.register(store.onTransition((lease) => this.update(lease)));
    this.register(store.watch(() => this.update(store.read())));
  }

  get current(): Lease {
    return this.lease;
  }

  humanHolds(): boolean {
    return this.lease.holder === 'human';
  }

  /** True only while this very viewer holds control (the input gate's question). */
  viewerHolds(viewerId: string): boolean {
    return viewerHolds(this.lease, viewerId);
  }

  take(viewerId: string): Lease {
    return this.store.acquire(viewerId, vscode.l10n.t('A person took control in VS Code.'));
  }

  /** Hands back if this viewer holds; `force` also ends another viewer's (or a broken) lease. */
  handBack(viewerId: string | undefined, force = false): Lease {
    return this.store.release(viewerId, { force });
  }

  private update(lease: Lease): void {
    const before = this.lease;
    this.lease = lease;
    if (before.epoch !== lease.epoch || before.holder !== lease.holder || before.viewerId !== lease.viewerId) {
      this.changed.fire(lease);
    }
  }
}
