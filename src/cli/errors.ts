/** A wrong command line: reported with the command's usage, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}
