/** The raw collection of a snapshot: read back from --replay's directory, or collected from the server. */
import { LARGE_BODY_BYTES } from '../body/file.js';
import path from 'node:path';
import { resolveConnection } from '../config/settings.js';
import { type CommandOptions } from '../config/options.js';
import { withHttpClient } from '../http/client.js';
import { collect } from '../collect/collect.js';
import { readCollection } from '../collect/replay.js';
import { BodySpool } from '../collect/body-spool.js';
import type { RawCollection } from '../collect/types.js';

import type { Reporter } from '../progress/reporter.js';
import type { Dispatcher } from 'undici';

type SnapshotOptions = CommandOptions<'snapshot'>;

/** What obtaining a collection uses of the command's dependencies. */
interface CollectDeps {
  readonly cwd: string;
  readonly reporter: Reporter;
  readonly env: NodeJS.ProcessEnv;
  readonly now: () => Date;
  readonly dispatcher?: Dispatcher;
}

/** Where a live run's spool of large bodies goes, and the spool once made. */
export interface Spooling {
  readonly parent: string;
  made?: BodySpool;
}

/** The raw collection: read back from --replay's directory, or collected from the server. */
export async function obtainCollection(
  o: SnapshotOptions,
  deps: CollectDeps,
  largeBodyBytes = LARGE_BODY_BYTES,
  spooling: Spooling,
): Promise<{ collection: RawCollection; secrets: readonly string[]; source: 'live' | 'replay' }> {
  if (o.replay !== undefined) {
    deps.reporter.info(`replaying ${o.replay}`);
    // With --raw, raw/ is written before the build: its bodies are checked now. Otherwise the build's check is used (markBodyFailures).
    const collection = await readCollection(path.resolve(deps.cwd, o.replay), {
      checkBodies: o.raw,
      largeBodyBytes,
    });
    return { collection, secrets: [], source: 'replay' };
  }
  const settings = resolveConnection(o, deps.env);
  const abort = new AbortController();
  return withHttpClient({ ...settings, signal: abort.signal }, deps.dispatcher, async (http) => {
    deps.reporter.info(`collecting from ${settings.baseUrl}`);
    const spool = (spooling.made = new BodySpool(spooling.parent, settings.tokens.secrets, largeBodyBytes));
    const { collection } = await collect(settings, { http, reporter: deps.reporter, abort, now: deps.now, spool });
    return { collection, secrets: settings.tokens.secrets, source: 'live' };
  });
}
