import { errorText } from "../../internal/error-text.js";

/** Go's texts for the errno values a runtime meets on its plugin and socket paths. */
const ERRNO_TEXT: Readonly<Record<string, string>> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOENT: "no such file or directory",
  EISDIR: "is a directory",
  ENOTDIR: "not a directory",
  ELOOP: "too many levels of symbolic links",
  EEXIST: "file exists",
  ENOEXEC: "exec format error",
  EADDRINUSE: "address already in use",
  ENAMETOOLONG: "file name too long",
  EROFS: "read-only file system",
  ENOSPC: "no space left on device",
};

/** A Node fs error as Go's *PathError prints it: `open /etc/nri/conf.d/10-a.conf: permission denied`. */
export function goPathError(e: unknown, op: string, path: string): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const text = code === undefined ? undefined : ERRNO_TEXT[code];
  return `${op} ${path}: ${text ?? errorText(e)}`;
}
