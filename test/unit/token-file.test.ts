import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readOptions } from '../../src/config/options.js';
import { resolveTokens } from '../../src/config/tokens.js';
import { UsageError } from '../../src/errors.js';
import { clearSecrets, redact } from '../../src/util/redact.js';
import { tmpDir } from '../helpers/run-cli.js';

// SVC_TOKEN_FILE, SVC_TOKEN_<TYPE>_FILE, SVC_AUDIT_TOKEN_FILE: a file holding
// the token (what systemd's LoadCredential= hands a service).
afterEach(() => clearSecrets());

const TOKEN = 'fake-token-from-a-file';
const AUDIT = 'FakeAuditToken00000000==';

function tokenFile(text: string, mode = 0o600): string {
  const path = join(tmpDir('svc-token-file-'), 'token');
  writeFileSync(path, text);
  chmodSync(path, mode); // not through writeFileSync, whose mode the umask narrows
  return path;
}

function usageError(f: () => unknown): UsageError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return e as UsageError;
  }
  throw new Error('no error');
}

describe('token files', () => {
  it('SVC_TOKEN_FILE gives the token (one trailing line break removed), named by the variable, and wins over --token', () => {
    const o = readOptions(
      'snapshot',
      { token: 'fake-token-from-the-flag' },
      { SVC_TOKEN_FILE: tokenFile(`${TOKEN}\n`) },
    );
    expect(o.token).toEqual({ value: TOKEN, source: 'SVC_TOKEN_FILE' });
    expect(o.sources.token).toBe('SVC_TOKEN_FILE');
    // Registered for redaction as soon as it is read.
    expect(redact(`x ${TOKEN} y`)).not.toContain(TOKEN);
  });

  it('a per-type file gives that type its token, before the general one', () => {
    const o = readOptions(
      'collect',
      {},
      { SVC_TOKEN: 'fake-token-general', SVC_TOKEN_VM_FILE: tokenFile(`${TOKEN}\r\n`, 0o400) },
    );
    const plan = resolveTokens(o);
    expect(plan.byType.VM).toEqual({ value: TOKEN, source: 'SVC_TOKEN_VM_FILE' });
    expect(plan.byType.User).toEqual({ value: 'fake-token-general', source: 'SVC_TOKEN' });
    expect(plan.authMode).toBe('per-type');
  });

  it('SVC_AUDIT_TOKEN_FILE is checked as the audit token is, without repeating the file', () => {
    expect(readOptions('audit', {}, { SVC_AUDIT_TOKEN_FILE: tokenFile(`${AUDIT}\n`) }).auditToken).toEqual({
      value: AUDIT,
      source: 'SVC_AUDIT_TOKEN_FILE',
    });
    const bad = 'NotAnAuditTokenAtAll-1234';
    const e = usageError(() => readOptions('audit', {}, { SVC_AUDIT_TOKEN_FILE: tokenFile(bad) }).auditToken);
    expect(e.message).toMatch(/SVC_AUDIT_TOKEN_FILE is not an audit token secret/);
    expect(e.message).not.toContain(bad);
  });

  it('refuses a file its group or others can open, naming it and the fix, never its contents', () => {
    for (const mode of [0o640, 0o604, 0o620]) {
      const path = tokenFile(TOKEN, mode);
      const e = usageError(() => readOptions('snapshot', {}, { SVC_TOKEN_FILE: path }).token);
      expect(e.message).toBe(
        `SVC_TOKEN_FILE=${path}: the token file is open to its group or others (mode 0${mode.toString(8)}); make it its owner's alone: chmod 600 ${path}`,
      );
    }
  });

  it('refuses a missing file, a directory, a FIFO (without waiting for a writer) and an empty file', () => {
    const dir = tmpDir('svc-token-file-');
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', ['-m', '0600', fifo]);
    const read = (path: string) =>
      usageError(() => readOptions('snapshot', {}, { SVC_TOKEN_FILE: path }).token).message;
    expect(read(join(dir, 'missing'))).toMatch(/^SVC_TOKEN_FILE=.*missing: the token file cannot be read \(ENOENT\)/);
    expect(read(dir)).toMatch(/not a regular file/);
    expect(read(fifo)).toMatch(/not a regular file/);
    expect(read(tokenFile('\n'))).toMatch(/the token file is empty/);
  });

  it('refuses the variable and its file variable set together; an empty one counts as unset', () => {
    const path = tokenFile(TOKEN);
    const e = usageError(
      () => readOptions('snapshot', {}, { SVC_TOKEN: 'fake-token-general', SVC_TOKEN_FILE: path }).token,
    );
    expect(e.message).toBe(
      'both SVC_TOKEN and SVC_TOKEN_FILE are set; set only one of them (an empty variable counts as unset)',
    );
    expect(e.message).not.toContain('fake-token-general');
    expect(readOptions('snapshot', {}, { SVC_TOKEN: '', SVC_TOKEN_FILE: path }).token).toEqual({
      value: TOKEN,
      source: 'SVC_TOKEN_FILE',
    });
    expect(readOptions('snapshot', {}, { SVC_TOKEN: 'fake-token-general', SVC_TOKEN_FILE: '' }).token).toEqual({
      value: 'fake-token-general',
      source: 'SVC_TOKEN',
    });
  });

  it('is read only when the command reads the token: a replay does not open it', () => {
    const o = readOptions('snapshot', {}, { SVC_TOKEN_FILE: '/nonexistent/token' });
    expect(o.sources.token).toBe('SVC_TOKEN_FILE');
    expect(o.replay).toBeUndefined();
  });

  it('checks the text as a token: a line break inside is refused with the variable named', () => {
    const e = usageError(() => readOptions('snapshot', {}, { SVC_TOKEN_FILE: tokenFile(`${TOKEN}\n\n`) }).token);
    expect(e.message).toMatch(/the token in SVC_TOKEN_FILE contains spaces, quotes/);
  });
});
