import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseCsv } from './csv-parse.js';

export const SOFFICE = ['/usr/bin/soffice', '/usr/local/bin/soffice', '/usr/lib/libreoffice/program/soffice'].find(
  (p) => existsSync(p),
);

/**
 * Every sheet of a workbook as LibreOffice reads it: converted to CSV (one
 * file per sheet: the 12th token of the CSV filter options, -1, selects every
 * sheet in LibreOffice 7.4 and later), values as shown, formulas not
 * exported (a formula cell would show its result, not the text written).
 * A private profile per call, so that parallel runs do not share one.
 */
export function sheetsViaLibreOffice(xlsx: string, workDir: string): Map<string, string[][]> {
  if (!SOFFICE) throw new Error('LibreOffice (soffice) is not installed: .ci/run installs libreoffice-calc-nogui');
  const out = join(workDir, 'lo-out');
  const profile = join(workDir, 'lo-profile');
  mkdirSync(out, { recursive: true });
  execFileSync(
    SOFFICE,
    [
      `-env:UserInstallation=file://${profile}`,
      '--headless',
      '--norestore',
      '--convert-to',
      'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1',
      '--outdir',
      out,
      xlsx,
    ],
    { stdio: 'pipe', timeout: 600_000 },
  );
  const base = basename(xlsx, '.xlsx');
  const sheets = new Map<string, string[][]>();
  for (const f of readdirSync(out)) {
    if (!f.startsWith(`${base}-`) || !f.endsWith('.csv')) continue;
    sheets.set(f.slice(base.length + 1, -4), parseCsv(readFileSync(join(out, f), 'utf8')));
  }
  return sheets;
}

/**
 * The workbook as LibreOffice holds it, saved as a flat OpenDocument
 * spreadsheet (one XML text): its document properties (office:meta), cell
 * styles (wrapping, number formats) and cell texts, as LibreOffice read them.
 */
export function fodsViaLibreOffice(file: string, workDir: string, importFilter?: string): string {
  if (!SOFFICE) throw new Error('LibreOffice (soffice) is not installed: .ci/run installs libreoffice-calc-nogui');
  const out = join(workDir, 'lo-fods');
  const profile = join(workDir, 'lo-profile-fods');
  mkdirSync(out, { recursive: true });
  const filter = importFilter ? [`--infilter=${importFilter}`] : [];
  execFileSync(
    SOFFICE,
    [
      `-env:UserInstallation=file://${profile}`,
      '--headless',
      '--norestore',
      ...filter,
      '--convert-to',
      'fods',
      '--outdir',
      out,
      file,
    ],
    { stdio: 'pipe', timeout: 120_000 },
  );
  return readFileSync(join(out, `${basename(file).replace(/\.[^.]+$/, '')}.fods`), 'utf8');
}
