import { ClosedError } from "./errors.js";

/**
 * The end of something that closes once (a connection, a mux trunk, a plugin): the first close
 * records its reason, later ones are ignored, and `closed` settles once the owner has torn down
 * (so what the teardown settles is seen before `closed` is).
 */
export class CloseOnce {
  private why: Error | undefined;
  private resolve: (reason: Error) => void = () => undefined;
  /** Settles with the reason once closed. */
  readonly closed: Promise<Error>;

  constructor() {
    this.closed = new Promise((r) => (this.resolve = r));
  }

  /** The reason, or undefined while open. */
  get reason(): Error | undefined {
    return this.why;
  }

  /** Records `reason` if this is the first close (then true: the owner tears down and calls settle()). */
  begin(reason: Error): boolean {
    if (this.why !== undefined) return false;
    this.why = reason;
    return true;
  }

  /** Settles `closed` with the reason begin() recorded. */
  settle(): void {
    if (this.why !== undefined) this.resolve(this.why);
  }
}

/**
 * The peer ended its bytes: `owner` closes with the decoder's error when a frame was cut short,
 * else with a ClosedError saying `byPeer`.
 */
export function closeAtEnd(decoder: { end(): void }, owner: { close(reason: Error): void }, byPeer: string): void {
  try {
    decoder.end();
    owner.close(new ClosedError(byPeer));
  } catch (e) {
    owner.close(e as Error);
  }
}
