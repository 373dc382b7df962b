import { Socket, connect } from "node:net";

/** Listens on a unix socket never wider than its mode (0600 by default); see the ttrpc layer. */
export { type ListenUnixOptions, listenUnix } from "../ttrpc/listen.js";

/** Where plugins find the runtime unless told otherwise. */
export const DEFAULT_SOCKET_PATH = "/var/run/nri/nri.sock";

/** Connects to a unix socket; rejects with an error naming the path. */
export function connectUnix(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    const onError = (e: Error): void => reject(new Error(`nri: cannot connect to ${path}: ${e.message}`, { cause: e }));
    s.once("error", onError);
    s.once("connect", () => {
      s.off("error", onError);
      resolve(s);
    });
  });
}

/**
 * The socket a runtime handed a plugin it launched: NRI_PLUGIN_SOCKET names an inherited file
 * descriptor. Undefined when the variable is not set.
 */
export function inheritedSocket(env: NodeJS.ProcessEnv): Socket | undefined {
  const raw = env.NRI_PLUGIN_SOCKET;
  if (raw === undefined || raw === "") return undefined;
  const fd = Number(raw);
  if (!Number.isSafeInteger(fd) || fd < 0) throw new RangeError(`nri: NRI_PLUGIN_SOCKET=${raw} is not a file descriptor number`);
  return new Socket({ fd, readable: true, writable: true });
}
