// A module resolve hook that makes the packages named in NRI_WIRE_HIDE_PEERS (comma-separated)
// impossible to find, as in a project that never installed them: node --import this-file ...
import { register } from "node:module";

const hidden = (process.env.NRI_WIRE_HIDE_PEERS ?? "").split(",").filter((s) => s !== "");
register(
  `data:text/javascript,${encodeURIComponent(`
const hidden = ${JSON.stringify(hidden)};
export async function resolve(specifier, context, next) {
  if (hidden.includes(specifier)) {
    const e = new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL);
    e.code = "ERR_MODULE_NOT_FOUND";
    throw e;
  }
  return next(specifier, context);
}`)}`,
);
