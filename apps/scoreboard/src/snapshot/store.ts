import type { Snapshot } from "./snapshot";

/**
 * Holds the current snapshot. Swapping is one reference assignment, so a
 * reader that took `current()` keeps a consistent snapshot for its whole call.
 */
export class SnapshotStore {
  private snapshot: Snapshot | undefined;
  private readonly listeners = new Set<(snapshot: Snapshot) => void>();
  /** When the next refresh is due (ms since the epoch); bounds `Cache-Control: max-age`. */
  nextRefreshAt = 0;

  /** The snapshot to answer from, or `undefined` before the first load. */
  current(): Snapshot | undefined {
    return this.snapshot;
  }

  /** Makes `snapshot` the current one. */
  swap(snapshot: Snapshot): void {
    this.snapshot = snapshot;
    for (const listener of this.listeners) listener(snapshot);
  }

  /** Calls `listener` on every swap; returns the unsubscribe function. */
  onSwap(listener: (snapshot: Snapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
