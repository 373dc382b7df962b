/** An interceptor of any side that logs `name>method` on the way in and `<name` (or `<name!` for an error) on the way out. */
export function logging<C extends { method: string }, R>(log: string[], name: string): (next: (c: C) => Promise<R>) => (c: C) => Promise<R> {
  return (next) => async (call) => {
    log.push(`${name}>${call.method}`);
    try {
      const answer = await next(call);
      log.push(`<${name}`);
      return answer;
    } catch (e) {
      log.push(`<${name}!`);
      throw e;
    }
  };
}
