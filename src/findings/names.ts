export { FINDINGS_FILE_NAME, FINDINGS_CSV_NAME } from '../manifests.js';
