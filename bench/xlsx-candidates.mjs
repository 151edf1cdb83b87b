/**
 * The XLSX writers that were candidates for the spreadsheet forms, on the same
 * 100,000 rows of 20 columns (drive-like: texts, numbers, booleans, two
 * date-times, nulls): time and peak RSS of one process per writer.
 *
 *   mkdir /tmp/xlsx-candidates && cd /tmp/xlsx-candidates && npm install exceljs@4.4.0 write-excel-file
 *   node bench/xlsx-candidates.mjs own /tmp/own.xlsx
 *   NODE_PATH=/tmp/xlsx-candidates/node_modules node bench/xlsx-candidates.mjs exceljs /tmp/exceljs.xlsx
 *   NODE_PATH=/tmp/xlsx-candidates/node_modules node bench/xlsx-candidates.mjs write-excel-file /tmp/wef.xlsx
 *
 * The candidates are not dependencies of the project: install them apart, as above.
 */
import { createWriteStream } from 'node:fs';
import { createRequire } from 'node:module';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
const [mode, out, nRows = '100000'] = process.argv.slice(2);
// ESM ignores NODE_PATH: resolve the candidates through it by hand.
const candidate = (name) => import(pathToFileURL(createRequire(`${process.env.NODE_PATH ?? process.cwd()}/`).resolve(name)).href);
const N = Number(nRows);
const headers = ['id','name','email','owner','realm','state','capacity','sizeOnDisk','created','modified','noBackup','readOnly','format','pool','tags','team','project','note','count','ratio'];
const row = (i) => [`drive|${i.toString(16).padStart(8,'0')}-aaaa-bbbb`, `Drive ${i}`, `user${i}@example.org`, `user|${i%5000}`, 'libvirt', i%3?'ready':'attached', 1e11+i, 5e10+i*3, 1.7e12+i*1000, 1.75e12+i*997, i%2===0, false, 'ext4', 'pool-a', 'a; b; c', `team|${i%2000}`, `proj|${i%5000}`, i%7?null:'some longer note text here', i%100, i/7];
const t0 = performance.now();
if (mode === 'exceljs') {
  const ExcelJS = (await candidate('exceljs')).default;
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: out, useStyles: true, useSharedStrings: false });
  const ws = wb.addWorksheet('drives', { views: [{ state: 'frozen', ySplit: 1 }] });
  ws.columns = headers.map((h) => ({ header: h, key: h, width: 20 }));
  for (let i = 0; i < N; i++) { const r = row(i); r[8] = new Date(r[8]); r[9] = new Date(r[9]); ws.addRow(r).commit(); }
  ws.autoFilter = { from: 'A1', to: 'T1' };
  ws.commit(); await wb.commit();
} else if (mode === 'write-excel-file') {
  const writeXlsxFile = (await candidate('write-excel-file/node')).default;
  const data = [headers.map((h) => ({ value: h, fontWeight: 'bold' }))];
  for (let i = 0; i < N; i++) { const r = row(i); data.push(r.map((v, j) => v === null ? null : j === 8 || j === 9 ? { value: new Date(v), type: Date, format: 'yyyy-mm-dd hh:mm:ss' } : { value: v, type: typeof v === 'number' ? Number : typeof v === 'boolean' ? Boolean : String })); }
  // write-excel-file 4 returns an object whose toFile() writes the file.
  await writeXlsxFile(data, { stickyRowsCount: 1 }).toFile(out);
} else {
  const { ZipWriter } = await import(new URL('../dist/sheets/zip.js', import.meta.url).href);
  const x = await import(new URL('../dist/sheets/xlsx.js', import.meta.url).href);
  const zip = new ZipWriter(new Date());
  function* rows() { for (let i = 0; i < N; i++) { const r = row(i); r[8] = { ms: r[8] }; r[9] = { ms: r[9] }; yield r; } }
  async function* gen() {
    yield* zip.entry('[Content_Types].xml', [x.contentTypesXml(1)]);
    yield* zip.entry('_rels/.rels', [x.ROOT_RELS_XML]);
    yield* zip.entry('xl/_rels/workbook.xml.rels', [x.workbookRelsXml(1)]);
    yield* zip.entry('xl/styles.xml', [x.STYLES_XML]);
    yield* zip.entry('xl/worksheets/sheet1.xml', x.sheetXml({ headers, widths: headers.map(() => 20), rows: rows(), rowCount: N, table: true }));
    yield* zip.entry('xl/workbook.xml', [x.workbookXml([{ name: 'drives', filter: '$A$1:$T$' + (N + 1) }])]);
    yield zip.end();
  }
  await pipeline(Readable.from(gen()), createWriteStream(out));
}
const ms = performance.now() - t0;
process.stdout.write(JSON.stringify({ mode, ms: Math.round(ms), rssMB: Math.round(process.resourceUsage().maxRSS / 1024) }) + '\n');
