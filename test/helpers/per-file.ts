import { afterAll, vi } from 'vitest';
import { clearSecrets } from '../../src/util/redact.js';
import { removeTmpDirs } from './run-cli.js';

/**
 * Runs before each test file. The files share one module graph per worker
 * (vitest.config.ts: isolate false), so what one file leaves in a module or
 * in the process is undone here before the next file starts: the secrets the
 * commands registered for redaction, the environment, spies, the file's
 * temporary directories (registered first, so run after the file's own hooks).
 */
const env = { ...process.env };

afterAll(() => {
  removeTmpDirs();
  clearSecrets();
  vi.restoreAllMocks();
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
  Object.assign(process.env, env);
});
