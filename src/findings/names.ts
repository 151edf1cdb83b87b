/** The files `--findings` adds to a snapshot directory (listed in the manifest's `files`). */
export const FINDINGS_FILE_NAME = '_findings.json';
/** `--findings --format csv`: the findings as rows, beside FINDINGS_FILE_NAME (docs/findings.md). */
export const FINDINGS_CSV_NAME = '_findings.csv';
