import { copyFileSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, runCli, tmpDir } from '../helpers/run-cli.js';

describe('a clone where lib/ was never built', () => {
  it('says what to run instead of a stack trace (exit 1)', async () => {
    const repo = realpathSync(tmpDir('svc-unbuilt-'));
    mkdirSync(join(repo, 'bin'));
    copyFileSync(CLI_BIN, join(repo, 'bin', 'svc-snapshot.js'));
    const r = await runCli(['--version'], { bin: join(repo, 'bin', 'svc-snapshot.js') });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`svc-snapshot: ${repo}/lib/ is not built; run npm install (or npm run build) in ${repo}/\n`);
    expect(r.stdout).toBe('');
  });
});
