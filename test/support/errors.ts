import { expect } from "vitest";

/** An error class, abstract ones included. */
export type ErrorClass<E extends Error> = abstract new (...args: never[]) => E;

/** The error `f` throws, checked to be a `kind`; fails the test when `f` returns. */
export function expectThrown<E extends Error>(kind: ErrorClass<E>, f: () => unknown): E {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(kind);
    return e as E;
  }
  throw new Error("test: no error thrown");
}

/** What `p` rejects with, checked to be a `kind`; fails the test when `p` resolves. */
export async function expectRejection<E extends Error>(kind: ErrorClass<E>, p: Promise<unknown>): Promise<E> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(kind);
  return e as E;
}

/** A pattern matching `text` and nothing more, for `toThrow` (which takes a string as a part). */
export function exactly(text: string): RegExp {
  return new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&")}$`, "u");
}
