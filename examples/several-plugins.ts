/**
 * Several plugins in one process: the logger, the device injector and the ulimit adjuster, each
 * its own NriPlugin with its own connection and index, sharing one event loop. The process ends
 * when the runtime has closed all of them.
 */
import { NriPlugin } from "nri-wire/plugin";
import { deviceInjector } from "./device-injector.js";
import { logger } from "./logger.js";
import { flags, isMain, main, run } from "./run.js";
import { ulimitAdjuster } from "./ulimit-adjuster.js";

if (isMain(import.meta)) {
  main(async () => {
    const f = flags();
    const socket = f.socket === undefined ? {} : { socketPath: f.socket };
    await Promise.all([
      run(new NriPlugin(logger("CreateContainer,StartContainer,RemoveContainer"), { ...socket, name: "logger", idx: "00" })),
      run(new NriPlugin(deviceInjector(), { ...socket, name: "device-injector", idx: "10" })),
      run(new NriPlugin(ulimitAdjuster(), { ...socket, name: "ulimit-adjuster", idx: "20" })),
    ]);
  });
}
