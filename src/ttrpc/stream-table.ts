/**
 * The streams in flight on one ttrpc connection, by stream id: what a server's calls and a
 * client's pending calls are kept in.
 *
 * A connection almost always has one call in flight at a time, so that one is held in two fields
 * and only the calls beside it in a Map. A Map that lives as long as its connection and goes from
 * empty to one entry and back at every call would reallocate its hash table at each of them, and
 * once the Map is old V8 allocates the new table in the old generation, where it stays until the
 * next full collection: under events back to back that was most of what a plugin's old
 * generation grew by, and so of its peak (docs/performance.md, Memory).
 */
export class StreamTable<T extends object> {
  /** The stream id of `first`; -1 while it is empty (stream ids are never negative). */
  private firstId = -1;
  private first: T | undefined;
  /** The streams beside `first`, made when first needed. */
  private more: Map<number, T> | undefined;

  get size(): number {
    return (this.first === undefined ? 0 : 1) + (this.more === undefined ? 0 : this.more.size);
  }

  get(id: number): T | undefined {
    if (id === this.firstId) return this.first;
    return this.more?.get(id);
  }

  /** Adds or replaces the stream `id`. */
  set(id: number, value: T): void {
    if (id === this.firstId || (this.first === undefined && this.more?.has(id) !== true)) {
      this.firstId = id;
      this.first = value;
    } else {
      (this.more ??= new Map()).set(id, value);
    }
  }

  /** Removes the stream `id`; whether it was there. */
  delete(id: number): boolean {
    if (id === this.firstId) {
      this.firstId = -1;
      this.first = undefined;
      return true;
    }
    return this.more !== undefined && this.more.delete(id);
  }

  /** The streams, oldest first. */
  values(): T[] {
    const out: T[] = [];
    const later = this.more === undefined ? [] : [...this.more];
    // `first` is older than every stream beside it that has a greater id: ids only grow.
    let i = 0;
    for (; i < later.length && later[i]![0] < this.firstId; i++) out.push(later[i]![1]);
    if (this.first !== undefined) out.push(this.first);
    for (; i < later.length; i++) out.push(later[i]![1]);
    return out;
  }

  clear(): void {
    this.firstId = -1;
    this.first = undefined;
    this.more = undefined;
  }
}
