import type { Command } from "./command.js";
import { buildCommand } from "./build.js";
import { examplePluginCommand } from "./example-plugin.js";
import { exampleRuntimeCommand } from "./example-runtime.js";
import { decodeCommand } from "./decode.js";
import { recordCommand } from "./record.js";
import { testPluginCommand } from "./test-plugin.js";
import { viewCommand } from "./view.js";

/** Every subcommand of `nri-wire`, in the order help lists them. */
export const COMMANDS: readonly Command[] = [examplePluginCommand, exampleRuntimeCommand, decodeCommand, viewCommand, recordCommand, testPluginCommand, buildCommand];
