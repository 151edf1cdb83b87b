/**
 * Runs the fake backend in its own process (the benchmark's server), e.g.
 *
 *   node --import tsx test/fake/serve.ts --release 3.14.1 --size large --latency 50 \
 *     --tokens-json '[{"value":"fake-token-all-types","types":["User","Team","Drive","VM","Project"]}]'
 *
 * Prints one JSON line `{"url": ..., "caFile": ...}` on stdout once every body
 * is serialised, and stops on SIGTERM or SIGINT.
 */
import { parseArgs } from 'node:util';
import { TOKEN_TYPES, type TokenType } from '../../src/api/catalog.js';
import { startFakeSite } from '../helpers/fake-site.js';
import { ALL_TYPES_TOKEN, type FakeToken } from './backend.js';
import { LARGE_SITE, LARGE_SITE_REALMS, type DatasetSizes } from './dataset.js';
import type { FakeRelease, RealmSpec } from './types.js';

function fail(message: string): never {
  process.stderr.write(`serve: ${message}\n`);
  process.exit(2);
}

function parseTokens(json: string | undefined): FakeToken[] | undefined {
  if (json === undefined) return undefined;
  const value: unknown = JSON.parse(json);
  if (!Array.isArray(value)) fail('--tokens-json must be an array');
  return value.map((t: unknown) => {
    const { value: v, types, readOnly } = (t ?? {}) as { value?: unknown; types?: unknown; readOnly?: unknown };
    if (typeof v !== 'string' || !Array.isArray(types) || !types.every((x) => TOKEN_TYPES.includes(x as TokenType))) {
      fail('--tokens-json entries are { value: string, types: TokenType[], readOnly?: boolean }');
    }
    return { value: v, types: types as TokenType[], readOnly: readOnly === true };
  });
}

const { values } = parseArgs({
  options: {
    release: { type: 'string', default: '3.14.1' },
    size: { type: 'string', default: 'small' },
    latency: { type: 'string', default: '0' },
    seed: { type: 'string', default: '1' },
    'tokens-json': { type: 'string' },
    'realms-json': { type: 'string' },
    /** Full sizes (the benchmark's scaled sites); wins over --size. */
    'sizes-json': { type: 'string' },
    /** Real-site text and shapes (test/fake/variety.ts). */
    variety: { type: 'boolean', default: false },
  },
  strict: true,
});

const release = values.release as FakeRelease;
if (release !== '3.13.8' && release !== '3.14.1') fail('--release is 3.13.8 or 3.14.1');
if (values.size !== 'small' && values.size !== 'large') fail('--size is small or large');
const latencyMs = Number(values.latency);
if (!Number.isFinite(latencyMs) || latencyMs < 0) fail('--latency is a number of milliseconds');
const large = values.size === 'large';
const sizes: Partial<DatasetSizes> | undefined = values['sizes-json']
  ? (JSON.parse(values['sizes-json']) as DatasetSizes)
  : large
    ? LARGE_SITE
    : undefined;
const realms: RealmSpec[] | undefined = values['realms-json']
  ? (JSON.parse(values['realms-json']) as RealmSpec[])
  : large
    ? [...LARGE_SITE_REALMS]
    : undefined;
const seed = /^\d+$/.test(values.seed) ? Number(values.seed) : values.seed;

const site = await startFakeSite({
  release,
  sizes,
  realms,
  seed,
  latencyMs,
  tokens: parseTokens(values['tokens-json']),
  variety: values.variety,
});
site.backend.warm();

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  site.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

const tokens = parseTokens(values['tokens-json']);
process.stdout.write(
  `${JSON.stringify({ url: site.url, caFile: site.caFile, token: (tokens?.[0] ?? ALL_TYPES_TOKEN).value })}\n`,
);
