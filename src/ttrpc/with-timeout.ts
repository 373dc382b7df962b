/**
 * `work`'s outcome, or a rejection with `onTimeout()` if `ms` pass first. The timer is cleared
 * as soon as the race is decided, so it never keeps a process alive after `work` settles.
 */
export async function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([work, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
