import { cpSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { deadPid, REPO_ROOT, runCli, tmpDir } from '../helpers/run-cli.js';
import { leftovers } from '../helpers/assert-output.js';

// A run killed with SIGKILL (the OOM killer, systemd after TimeoutStopSec)
// runs no signal handler: its staging directory, and the previous snapshot
// it had moved aside, stay beside the output directory. The next run that
// publishes the same directory recovers them and says so.
const NAME = 'svc-snapshot-2026-11-21';
let dead: number;
let complete: string;

beforeAll(async () => {
  dead = await deadPid();
  complete = join(tmpDir(), 'complete');
  expect((await replay(complete, ['--quiet'])).code).toBe(0);
}, 300_000);

function replay(dir: string, extra: string[] = []) {
  return runCli(['--replay', join(REPO_ROOT, 'recordings', 'platform-3.14.1'), '--out-dir', dir, ...extra]);
}

/** A staging directory as a killed run leaves it: 0700, an export half written. */
function partial(parent: string, name: string): void {
  mkdirSync(join(parent, name), { mode: 0o700 });
  writeFileSync(join(parent, name, 'users.csv'), 'id,email\n1,someone@example.');
}

it('restores the snapshot a run killed while publishing had moved aside, and removes its staging directory', async () => {
  const parent = tmpDir();
  cpSync(complete, join(parent, `.${NAME}.previous-${dead}-0a1b2c3d`), { recursive: true });
  partial(parent, `.${NAME}.partial-${dead}-aB3xY9`);
  // A concurrent run's (this process is alive), and another output directory's: left alone.
  const live = `.${NAME}.partial-${process.pid}-live01`;
  const other = `.svc-snapshot-2026-11-20.partial-${dead}-zZ9yX8`;
  partial(parent, live);
  partial(parent, other);

  const res = await replay(join(parent, NAME));
  expect(res.code, res.stderr).toBe(0);
  expect(res.stderr).toContain(`removed .${NAME}.partial-${dead}-aB3xY9, left by a run that was killed`);
  expect(res.stderr).toContain(
    `restored ${NAME} from .${NAME}.previous-${dead}-0a1b2c3d, left by a run killed while publishing`,
  );
  expect(leftovers(parent).sort()).toEqual([live, other].sort());
  expect(existsSync(join(parent, NAME, '_snapshot-manifest.json'))).toBe(true);
});

it('removes the snapshot moved aside when the output directory was published again since', async () => {
  const parent = tmpDir();
  cpSync(complete, join(parent, NAME), { recursive: true });
  renameSync(join(parent, NAME), join(parent, `.${NAME}.previous-${dead}-deadbeef`));
  cpSync(complete, join(parent, NAME), { recursive: true });

  const res = await replay(join(parent, NAME));
  expect(res.code, res.stderr).toBe(0);
  expect(res.stderr).toContain(`removed .${NAME}.previous-${dead}-deadbeef, left by a run killed while publishing`);
  expect(leftovers(parent)).toEqual([]);
});
