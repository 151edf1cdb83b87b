export { build, buildAll } from './build.js';
export { EXPORTS, exportByName, checkExportCatalog } from './catalog.js';
export { defineExport, field, join, count, realm, unavailable } from './define.js';
export type { ColumnDef, ColumnSource, ExportDef, Representation } from './define.js';
export { serializeExport, exportFileName } from './serialize.js';
export { renderExportsMarkdown } from './docs.js';
export type * from './types.js';
