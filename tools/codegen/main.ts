/** Entry point of protoc-gen-nri-wire, as buf or protoc runs it (`tsx tools/codegen/main.ts`). */
import { runNodeJs } from "@bufbuild/protoplugin";
import { protocGenNriWire } from "./plugin.js";

runNodeJs(protocGenNriWire);
