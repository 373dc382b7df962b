import { Mutex } from "./mutex.js";
import type { RuntimePlugin } from "./runtime-plugin.js";

/** What removeClosed returns when no plugin closed: one shared, empty, read-only list. */
const NONE: readonly RuntimePlugin[] = [];

/**
 * The registered plugins in invocation order, and the validators among them. Every event holds
 * the lock for its whole run, so events are serialized and a plugin joins only between events.
 * A plugin that closes stays in the list (events skip it) until the end of the next event.
 */
export class PluginRegistry {
  private list: RuntimePlugin[] = [];
  private validatorList: RuntimePlugin[] = [];
  private readonly lock = new Mutex();

  /** `counted` is told the number of plugins each time closed ones are dropped, as Go's UpdatePluginCount is. */
  constructor(private readonly counted?: (count: number) => void) {}

  /** Plugins in invocation order: by index, then in the order they joined. */
  get plugins(): readonly RuntimePlugin[] {
    return this.list;
  }

  /** The validators, in the same order; rebuilt only when closed plugins are dropped. */
  get validators(): readonly RuntimePlugin[] {
    return this.validatorList;
  }

  /** Runs `fn` holding the event lock. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock.run(fn);
  }

  /** Adds plugins and restores the order; call holding the lock. Returns the plugins dropped. */
  add(...plugins: RuntimePlugin[]): readonly RuntimePlugin[] {
    this.list.push(...plugins);
    for (const p of plugins) if (p.isValidator) this.validatorList.push(p);
    return this.sort();
  }

  /**
   * Drops closed plugins and rebuilds the validator list; call holding the lock. Returns the
   * dropped plugins for the caller to stop.
   */
  removeClosed(): readonly RuntimePlugin[] {
    // Every event ends here: with no plugin closed, nothing is rebuilt (and nothing allocated).
    let i = 0;
    while (i < this.list.length && !this.list[i]!.closed) i++;
    if (i === this.list.length) {
      this.counted?.(this.list.length);
      return NONE;
    }
    const closed = this.list.filter((p) => p.closed);
    this.list = this.list.filter((p) => !p.closed);
    this.validatorList = this.list.filter((p) => p.isValidator);
    this.counted?.(this.list.length);
    return closed;
  }

  /** Removes every plugin and returns them. */
  clear(): RuntimePlugin[] {
    const all = this.list;
    this.list = [];
    this.validatorList = [];
    return all;
  }

  private sort(): readonly RuntimePlugin[] {
    const closed = this.removeClosed();
    // The reference sorts by index alone with an unstable sort; a stable one keeps equal indices in joining order.
    const byIdx = (a: RuntimePlugin, b: RuntimePlugin): number => (a.idx < b.idx ? -1 : a.idx > b.idx ? 1 : 0);
    this.list.sort(byIdx);
    this.validatorList.sort(byIdx);
    return closed;
  }
}
