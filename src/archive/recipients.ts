/**
 * Who an archive is encrypted to: `--encrypt-to <recipient>` (repeatable)
 * and the recipients file `SVC_ENCRYPT_TO_FILE` names, read as `age -R`
 * reads one (a recipient a line, `#` comments and blank lines skipped), the
 * union of both. Only age's X25519 recipients (`age1…`) are taken. Checked
 * before anything is collected; a recipient is a public key, but which keys
 * an archive is for is nobody's business: no message repeats one (only
 * --debug lists them).
 */
import { readSmallFile } from '../util/safe-read.js';
import { Encrypter } from 'age-encryption';
import { UsageError } from '../errors.js';
import { escapeControl } from '../util/escape.js';

/** The variable naming a recipients file. */
const RECIPIENTS_FILE_VARIABLE = 'SVC_ENCRYPT_TO_FILE';

const SUPPORTED = 'an age X25519 recipient (age1… as age-keygen prints it on its "Public key:" line)';

/** What another form of key is, when it is a known one, for the message. */
function otherForm(text: string): string | undefined {
  if (/^AGE-SECRET-KEY-/i.test(text))
    return 'an age identity (a secret key), not a recipient: give its public key (age-keygen -y) and keep the identity off this host';
  if (/^age1pq1/.test(text)) return 'a post-quantum hybrid age recipient (age1pq1…), which this tool does not write';
  if (/^age1tag/.test(text)) return 'an age tag recipient (age1tag…), which this tool does not write';
  if (/^(ssh-|ecdsa-sha2-|sk-)/.test(text)) return 'an SSH public key, which this tool does not encrypt to';
  if (/^age1[a-z0-9]+1/.test(text)) return 'an age plugin recipient, which this tool does not encrypt to';
  return undefined;
}

/** One recipient checked: itself, or a usage error naming `where` it came from (never the text itself). */
function checkRecipient(text: string, where: string): string {
  const other = otherForm(text);
  if (other !== undefined) throw new UsageError(`${where} is ${other}; give ${SUPPORTED}`);
  try {
    if (!text.startsWith('age1')) throw new Error('not age1');
    new Encrypter().addRecipient(text);
  } catch {
    throw new UsageError(`${where} is not ${SUPPORTED}: a mistyped or cut key, or another kind of key`);
  }
  return text;
}

/** The recipients of a file in `age -R`'s format; a usage error naming the file and line for a bad one. */
function readRecipientsFile(file: string): string[] {
  const text = readKeyFile(file, RECIPIENTS_FILE_VARIABLE, 'give a file of age recipients, one a line');
  const out: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    out.push(checkRecipient(line, `line ${i + 1} of ${escapeControl(file)} (${RECIPIENTS_FILE_VARIABLE})`));
  });
  if (out.length === 0)
    throw new UsageError(
      `${RECIPIENTS_FILE_VARIABLE} names ${escapeControl(file)}, which holds no recipient; ` +
        'give a file of age recipients, one a line',
    );
  return out;
}

/**
 * The recipients asked for, each once (the flag's, then the file's), or none
 * when neither is given; a UsageError (exit 2) for a bad one.
 */
export function readRecipients(flag: readonly string[] | undefined, env: NodeJS.ProcessEnv): string[] {
  const given = (flag ?? []).map((r, i) => checkRecipient(r.trim(), `--encrypt-to #${i + 1}`));
  const file = env[RECIPIENTS_FILE_VARIABLE];
  const fromFile = file !== undefined && file !== '' ? readRecipientsFile(file) : [];
  return [...new Set([...given, ...fromFile])];
}

/**
 * The text of a recipients or identity file named by the user, read as every
 * small file the user names is (a FIFO or device refused, not waited on); a
 * usage error naming the file and what to give otherwise, never its text.
 */
export function readKeyFile(file: string, from: string, give: string): string {
  const read = readSmallFile(file, { maxBytes: 1024 * 1024, followLinks: true });
  if (Buffer.isBuffer(read)) return read.toString('utf8');
  const why = read.problem === 'unopened' ? read.code : read.problem;
  throw new UsageError(`${from} names ${escapeControl(file)}, which cannot be read (${why}); ${give}`);
}
