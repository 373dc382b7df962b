/** Something whose reads can be held: a connection or a mux trunk. */
export interface Holdable {
  /** Stops reading until a matching release(). */
  hold(): void;
  /** Undoes one hold(). */
  release(): void;
}

/**
 * Counted holds on a stream's reads: it pauses at the first hold and resumes when the last is
 * released, unless its owner has closed meanwhile.
 */
export class ReadHolds {
  private count = 0;

  constructor(private readonly stream: { pause(): unknown; resume(): unknown }) {}

  hold(): void {
    if (this.count++ === 0) this.stream.pause();
  }

  /** Undoes one hold; with none left, reading resumes if the owner is still `open`. */
  release(open: boolean): void {
    if (this.count > 0 && --this.count === 0 && open) this.stream.resume();
  }
}

/**
 * Moves a holder's single hold on `owner` to `on` and returns the new state: a stream whose
 * queue fills holds its connection once, however often it says so, and releases it once.
 */
export function toggleHold(owner: Holdable, holding: boolean, on: boolean): boolean {
  if (on !== holding) {
    if (on) owner.hold();
    else owner.release();
  }
  return on;
}
