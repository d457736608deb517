/**
 * Lifetimes: the one shape of "undo this" in the extension, and the base class of every object
 * that owns others. Its `{ dispose() }` is VS Code's `Disposable` shape, so the same value is an
 * unsubscribe from a core event, a VS Code registration, or a child object; free of `vscode`,
 * so core code uses it too. Modelled on GitHub Pull Requests' `src/common/lifecycle.ts`.
 */

/** Anything that can be undone once: a subscription, a registration, a child object. */
export interface DisposableLike {
  dispose(): void;
}

/** A subscription ending in `end` (called at most once, however often it is disposed). */
export function toDisposable(end: () => void): DisposableLike {
  let done = false;
  return {
    dispose: () => {
      if (!done) {
        done = true;
        end();
      }
    },
  };
}

/**
 * An owner: what it `register`s is disposed with it, last registered first (a child made from
 * another goes before it). Registering after disposal disposes at once, so nothing outlives
 * its owner.
 */
export abstract class Disposable implements DisposableLike {
  private readonly owned: DisposableLike[] = [];
  private disposed = false;

  /** Whether dispose() ran: a subclass's own teardown runs once, however often it is called. */
  protected get isDisposed(): boolean {
    return this.disposed;
  }

  /** Makes `child` live exactly as long as this object; returns it. */
  register<T extends DisposableLike>(child: T): T {
    if (this.disposed) {
      child.dispose();
    } else {
      this.owned.push(child);
    }
    return child;
  }

  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    for (const child of this.owned.splice(0).reverse()) {
      child.dispose();
    }
  }
}
