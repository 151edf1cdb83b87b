/**
 * The names of the files that `convert` and `report` write into a snapshot
 * directory after it is published: beside the readers (src/snapshot), the
 * check of what an output directory may hold (owned.ts) needs them too.
 */

/** The report's page in a snapshot of that date (README.md, "The report"). */
export function reportFileName(date: string): string {
  return `svc-snapshot-${date}.html`;
}

/** The workbook of a snapshot of that date (docs/spreadsheets.md). */
export function workbookFileName(date: string): string {
  return `svc-snapshot-${date}.xlsx`;
}

/** An export's CSV form: its JSON file's name, ending in .csv (docs/spreadsheets.md). */
export function csvFileName(exportFile: string): string {
  return exportFile.replace(/\.json$/, '.csv');
}
