/**
 * Writes docs/exports.md from the export catalog:
 *
 *   node --import tsx scripts/gen-docs.ts          # write the file
 *   node --import tsx scripts/gen-docs.ts --check  # exit 1 when the file is stale
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderExportsMarkdown } from '../src/exports/docs.js';

export { renderExportsMarkdown };

export const EXPORTS_DOC = fileURLToPath(new URL('../docs/exports.md', import.meta.url));

function main(argv: readonly string[]): number {
  const text = renderExportsMarkdown();
  if (argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(EXPORTS_DOC, 'utf8');
    } catch {
      // missing: stale
    }
    if (current === text) return 0;
    process.stderr.write(`${EXPORTS_DOC} is stale: run node --import tsx scripts/gen-docs.ts\n`);
    return 1;
  }
  writeFileSync(EXPORTS_DOC, text);
  process.stdout.write(`wrote ${EXPORTS_DOC}\n`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main(process.argv.slice(2));
