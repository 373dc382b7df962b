import { readFileSync } from "node:fs";
import { request, type RequestOptions } from "node:https";

/** A Kubernetes object as the API returns it: only what the suite reads is typed. */
export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
    readonly creationTimestamp?: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
    readonly deletionTimestamp?: string;
  };
  readonly spec?: Record<string, unknown>;
  readonly status?: Record<string, unknown>;
}

interface List {
  readonly metadata: { readonly resourceVersion: string };
  readonly items: KubeObject[];
}

/** An answer of the API server other than 2xx. */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A client of one API server, authenticated with a client certificate (cluster-admin here). */
export class KubeApi {
  private readonly tls: Pick<RequestOptions, "ca" | "cert" | "key">;
  private readonly url: URL;

  constructor(server: string, ca: string, cert: string, key: string) {
    this.url = new URL(server);
    this.tls = { ca: readFileSync(ca), cert: readFileSync(cert), key: readFileSync(key) };
  }

  private options(method: string, path: string, headers: Record<string, string> = {}): RequestOptions {
    return { ...this.tls, method, hostname: this.url.hostname, port: this.url.port, path, headers, agent: false };
  }

  /** One request; the body parsed as JSON when it is JSON, else the text. */
  async call<T = unknown>(method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: "application/json" };
    if (payload !== undefined) {
      headers["content-type"] = method === "PATCH" ? "application/merge-patch+json" : "application/json";
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    return new Promise<T>((res, rej) => {
      const req = request(this.options(method, path, headers), (resp) => {
        const chunks: Buffer[] = [];
        resp.on("data", (c: Buffer) => chunks.push(c));
        resp.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          const status = resp.statusCode ?? 0;
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON (healthz, logs)
          }
          if (status < 200 || status > 299) {
            const message = (parsed as { message?: string }).message ?? text.trim();
            rej(new KubeApiError(status, `cluster: ${method} ${path}: ${status} ${message}`));
          } else res(parsed as T);
        });
        resp.on("error", rej);
      });
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`cluster: ${method} ${path}: no answer within ${timeoutMs} ms`)));
      req.on("error", (e) => rej(e.message.startsWith("cluster:") ? e : new Error(`cluster: ${method} ${path}: ${e.message}`)));
      req.end(payload);
    });
  }

  get<T = KubeObject>(path: string): Promise<T> {
    return this.call<T>("GET", path);
  }

  /**
   * Resolves with the first object of the collection at `path` (with `query`, e.g. a field
   * selector) that `pred` holds for: among those listed now, else as the watch from that list
   * reports them. Throws `what` after `timeoutMs` with the last object seen.
   */
  async waitFor(path: string, query: string, pred: (o: KubeObject) => boolean, what: string, timeoutMs: number): Promise<KubeObject> {
    const deadline = Date.now() + timeoutMs;
    let last: KubeObject | undefined;
    for (;;) {
      const list = await this.get<List>(`${path}?${query}`);
      const found = list.items.find(pred);
      if (found !== undefined) return found;
      last = list.items.at(-1) ?? last;
      const left = deadline - Date.now();
      if (left <= 0) break;
      // A watch ends when the server times it out or its resourceVersion is too old: list again.
      const hit = await this.watchOnce(`${path}?${query}&watch=1&allowWatchBookmarks=false&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=${Math.max(1, Math.ceil(left / 1000))}`, pred, left, (o) => (last = o));
      if (hit !== undefined) return hit;
      if (Date.now() >= deadline) break;
    }
    throw new Error(`cluster: ${what} (waited ${timeoutMs} ms); last seen: ${last === undefined ? "nothing" : JSON.stringify(last.status ?? last.metadata)}`);
  }

  /** Streams one watch until `pred` holds for an added or modified object, the stream ends or `timeoutMs` passes. */
  private watchOnce(path: string, pred: (o: KubeObject) => boolean, timeoutMs: number, seen: (o: KubeObject) => void): Promise<KubeObject | undefined> {
    return new Promise((res, rej) => {
      let done = false;
      const finish = (o: KubeObject | undefined) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        req.destroy();
        res(o);
      };
      const req = request(this.options("GET", path, { accept: "application/json" }), (resp) => {
        if (resp.statusCode !== 200) {
          finish(undefined);
          return;
        }
        let buf = "";
        resp.on("data", (c: Buffer) => {
          buf += c.toString();
          let nl: number;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line.trim() === "") continue;
            const ev = JSON.parse(line) as { type: string; object: KubeObject };
            if (ev.type === "ERROR") return finish(undefined);
            if (ev.type !== "ADDED" && ev.type !== "MODIFIED") continue;
            seen(ev.object);
            if (pred(ev.object)) return finish(ev.object);
          }
        });
        resp.on("end", () => finish(undefined));
        resp.on("error", () => finish(undefined));
      });
      const timer = setTimeout(() => finish(undefined), timeoutMs);
      req.on("error", (e) => {
        if (!done) {
          done = true;
          clearTimeout(timer);
          rej(new Error(`cluster: watch ${path}: ${e.message}`));
        }
      });
      req.end();
    });
  }
}
