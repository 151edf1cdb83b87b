import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
};

/** The tool as it names itself in manifests. */
export const TOOL = { name: pkg.name, version: pkg.version } as const;
