// How many viewers watch this window's screen, across windows: the viewer records next to the lease (src/core/viewers.ts), counted for the views' control bar.
import * as vscode from 'vscode';
import { Disposable, toDisposable, type DisposableLike } from './core/lifecycle';
import type { ViewerKind, ViewerRegistry } from './core/viewers';

/**
 * The viewer count, kept current: recounted when a record of any window appears or goes (the
 * directory is watched, nothing polls) and after this window's own changes at once.
 */
export class ViewerCount extends Disposable {
  private count: number;
  private readonly changed = this.register(new vscode.EventEmitter<number>());
  readonly onDidChange = this.changed.event;

  constructor(private readonly registry: ViewerRegistry) {
    super();
    this.count = registry.count();
    this.register(registry.watch(() => this.refresh()));
  }

  get current(): number {
    return this.count;
  }

  /** Counts one connected viewer of this window until the returned disposable runs. */
  add(viewerId: string, kind: ViewerKind): DisposableLike {
    let record: DisposableLike;
    try {
      record = this.registry.register(viewerId, kind);
    } catch {
      return toDisposable(() => undefined); // a record that cannot be written only goes uncounted
    }
    this.refresh();
    return toDisposable(() => {
      record.dispose();
      this.refresh();
    });
  }

  private refresh(): void {
    const count = this.registry.count();
    if (count !== this.count) {
      this.count = count;
      this.changed.fire(count);
    }
  }
}
