import { generateDataset, LARGE_SITE } from './test/fake/dataset.ts';
import * as m from './src/api/models.ts';
import { z } from 'zod';
const ds = generateDataset({ sizes: { ...LARGE_SITE } });
const drives = JSON.parse(JSON.stringify(ds.drives));
for (let k = 0; k < 3; k++) {
let t = performance.now();
for (const d of drives) m.DriveInfo.safeParse(d);
console.log('per record', performance.now() - t);
t = performance.now();
z.array(m.DriveInfo).safeParse(drives);
console.log('array', performance.now() - t);
t = performance.now();
for (const d of drives) m.DriveInfo.safeParse(d, { jitless: true } as any);
console.log('jitless', performance.now() - t);
}
console.log(drives[0]);
z.config({ jitless: true });
let t = performance.now();
for (const d of drives) m.DriveInfo.safeParse(d);
console.log('global jitless', performance.now() - t);
