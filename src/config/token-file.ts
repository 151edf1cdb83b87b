/**
 * Token files: `SVC_TOKEN_FILE`, `SVC_TOKEN_<TYPE>_FILE`, `SVC_AUDIT_TOKEN_FILE`
 * name a file holding the token of the variable without `_FILE` (systemd's
 * LoadCredential= hands a secret to a service this way, as a file in
 * $CREDENTIALS_DIRECTORY). The file variable stands for its variable: it
 * wins over the flag as the variable does, and setting both is a usage
 * error (which one was meant cannot be known). An empty variable is unset.
 */
import { readSmallFile } from '../util/safe-read.js';
import { UsageError } from '../errors.js';

/** A token is a few hundred bytes at most; anything past this is not a token file. */
const MAX_TOKEN_FILE_BYTES = 64 * 1024;

/**
 * The text of a token file: a regular file (no FIFO or device: opened
 * without blocking), readable and writable by its owner only, not empty, at
 * most 64 KiB, with one trailing line break removed. The text is then checked
 * as the variable's value would be; messages name the variable and the path,
 * never the contents. `noun` and `holding` name other secret files read the
 * same way (SVC_NOTIFY_FILE's targets, SVC_NOTIFY_HMAC_FILE's key).
 */
export function readSecretFile(
  fileVariable: string,
  path: string,
  noun = 'the token file',
  holding = 'the token',
): string {
  const fail = (what: string) => new UsageError(`${fileVariable}=${path}: ${what}`);
  const read = readSmallFile(path, {
    maxBytes: MAX_TOKEN_FILE_BYTES,
    followLinks: true,
    check: (st) => {
      if ((st.mode & 0o077) === 0) return;
      const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
      throw fail(`${noun} is open to its group or others (mode ${mode}); make it its owner's alone: chmod 600 ${path}`);
    },
  });
  if (!Buffer.isBuffer(read)) {
    if (read.problem === 'not a regular file')
      throw fail(`not a regular file; give the path of a file holding ${holding}`);
    if (read.problem === 'too large')
      throw fail(`larger than ${MAX_TOKEN_FILE_BYTES / 1024} KiB, which no token or key file is`);
    throw fail(
      `${noun} cannot be read (${read.code}); give the path of a file holding ${holding}, readable by the user running svc-snapshot`,
    );
  }
  const text = read.toString('utf8').replace(/\r?\n$/, '');
  if (text === '') throw fail(`${noun} is empty; write ${holding} into it`);
  return text;
}

/**
 * The value of a secret option given by its file variable: refused when the
 * variable itself is set too; the file's text is parsed as the variable's
 * would be, named by the file variable (a token's `source`).
 */
export function fromTokenFile(
  variable: string,
  path: string,
  variableAlsoSet: boolean,
  parse: ((raw: string, from: string) => unknown) | undefined,
): unknown {
  const fileVariable = `${variable}_FILE`;
  if (variableAlsoSet) {
    throw new UsageError(
      `both ${variable} and ${fileVariable} are set; set only one of them (an empty variable counts as unset)`,
    );
  }
  const text = readSecretFile(fileVariable, path);
  return parse === undefined ? text : parse(text, fileVariable);
}
