/**
 * Writes the generated documents:
 *   docs/exports.md          from the export catalog (src/exports)
 *   docs/summary-schema.json from the --json summary schemas (src/summaries/schemas.ts)
 *   docs/findings.md         from the finding rules (src/findings/rules)
 *
 *   node --import tsx scripts/gen-docs.ts          # write the files
 *   node --import tsx scripts/gen-docs.ts --check  # exit 1 when a file is stale
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderExportsMarkdown } from './docs/exports.js';
import { renderSummarySchema } from '../src/summaries/schemas.js';
import { renderFindingsMarkdown } from './docs/findings.js';

export { renderExportsMarkdown, renderSummarySchema, renderFindingsMarkdown };

export const EXPORTS_DOC = fileURLToPath(new URL('../docs/exports.md', import.meta.url));
export const SUMMARY_DOC = fileURLToPath(new URL('../docs/summary-schema.json', import.meta.url));
export const FINDINGS_DOC = fileURLToPath(new URL('../docs/findings.md', import.meta.url));

export const GENERATED: ReadonlyArray<{ file: string; render: () => string }> = [
  { file: EXPORTS_DOC, render: renderExportsMarkdown },
  { file: SUMMARY_DOC, render: () => renderSummarySchema() },
  { file: FINDINGS_DOC, render: renderFindingsMarkdown },
];

function main(argv: readonly string[]): number {
  let stale = 0;
  for (const { file, render } of GENERATED) {
    const text = render();
    if (argv.includes('--check')) {
      let current = '';
      try {
        current = readFileSync(file, 'utf8');
      } catch {
        // missing: stale
      }
      if (current !== text) {
        process.stderr.write(`${file} is stale: run node --import tsx scripts/gen-docs.ts\n`);
        stale++;
      }
      continue;
    }
    writeFileSync(file, text);
    process.stdout.write(`wrote ${file}\n`);
  }
  return stale > 0 ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main(process.argv.slice(2));
