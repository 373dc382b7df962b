/**
 * Memory capper: shares a memory budget (`--budget BYTES`, default 1 GiB) equally among the
 * running containers. Containers running when it starts are capped through the Synchronize
 * answer; when another container starts, every running container gets its new share through an
 * unsolicited UpdateContainers call, sent after the event's answer (never awaited inside a
 * handler: some runtimes hold a lock while they deliver an event).
 */
import { ContainerState, NriPlugin, type PluginHandlers, UpdateBuilder } from "nri-wire/plugin";
import { flags, isMain, main, pluginOptions, run } from "./run.js";

/** The memory capper's handlers; `plugin()` is the plugin they belong to, for unsolicited updates. */
export function memoryCapper(budget: number, plugin: () => NriPlugin): PluginHandlers {
  const running = new Set<string>();
  const share = (): number => Math.floor(budget / Math.max(1, running.size));
  return {
    synchronize: (req) => {
      for (const c of req.containers) if (c.state === ContainerState.CONTAINER_RUNNING) running.add(c.id);
      // A plain object is fine where a message is expected; numbers stand for 64-bit fields.
      return { update: [...running].map((id) => ({ containerId: id, linux: { resources: { memory: { limit: share() } } } })) };
    },
    postStartContainer: (req) => {
      running.add(req.container?.id ?? "");
      const updates = [...running].map((id) => new UpdateBuilder(id).setLinuxMemoryLimit(share()).build());
      setImmediate(() => {
        plugin()
          .updateContainers(updates)
          .then((failed) => {
            for (const u of failed) process.stderr.write(`memory-capper: update of ${u.containerId} failed\n`);
          })
          .catch((e: unknown) => process.stderr.write(`memory-capper: ${(e as Error).message}\n`));
      });
    },
    removeContainer: (req) => {
      running.delete(req.container?.id ?? "");
    },
  };
}

if (isMain(import.meta)) {
  main(async () => {
    const f = flags(["budget"]);
    const budget = Number(f.budget ?? 2 ** 30);
    if (!Number.isSafeInteger(budget) || budget <= 0) throw new Error(`memory-capper: --budget ${f.budget} is not a positive integer`);
    const plugin: NriPlugin = new NriPlugin(memoryCapper(budget, () => plugin), pluginOptions(f, "memory-capper", "30"));
    await run(plugin);
  });
}
