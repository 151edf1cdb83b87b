import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_TYPES_TOKEN } from '../fake/backend.js';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.js';
import { prometheusToolsUnavailable, promtoolCheck, startNodeExporter } from '../helpers/prometheus.js';
import { runCli, tmpDir } from '../helpers/run-cli.js';

// --metrics-file as node_exporter reads it (CONTRACT section 12): two sites' files in one textfile directory, read by
// Debian's prometheus-node-exporter with no error, and every file the tool writes passing `promtool check metrics`.
const why = prometheusToolsUnavailable();

/** The series of a text-format body, as "name{label=value,...}" with the labels sorted (node_exporter sorts them). */
function series(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$/.exec(line);
    if (!m) continue;
    const labels = [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)]
      .map((l) => `${l[1]}=${l[2]}`)
      .sort();
    out.push(`${m[1]}{${labels.join(',')}}`);
  }
  return out;
}

describe.skipIf(why !== null)(
  why === null
    ? 'metrics files read by node_exporter and promtool'
    : `metrics files read by node_exporter and promtool (skipped: ${why})`,
  () => {
    let a: FakeSite;
    let b: FakeSite;
    beforeAll(async () => {
      [a, b] = await Promise.all([startFakeSite({ seed: 3 }), startFakeSite({ seed: 4 })]);
    });
    afterAll(async () => {
      await Promise.all([a?.close(), b?.close()]);
    });

    const run = (site: FakeSite, dir: string, args: string[]) =>
      runCli([...args, '--base-url', site.url, '--ca-file', site.caFile, '--retries', '0', '--quiet'], {
        env: { SVC_TOKEN: ALL_TYPES_TOKEN.value },
        cwd: dir,
      });

    it("two sites' files of every kind in one textfile directory: scraped with no error, every series there, each file passing promtool check metrics", async () => {
      const dir = tmpDir();
      const textfile = join(dir, 'textfile');
      mkdirSync(textfile);
      const file = (name: string) => join(textfile, name);
      expect((await run(a, dir, ['snapshot', '--metrics-file', file('snapshot-a.prom'), '--out-dir', 'a'])).code).toBe(
        0,
      );
      b.backend.setFault('drives', { statuses: [500], always: true });
      try {
        expect(
          (await run(b, dir, ['snapshot', '--metrics-file', file('snapshot-b.prom'), '--out-dir', 'b'])).code,
        ).toBe(1);
      } finally {
        b.backend.clearFaults();
      }
      expect(
        (await run(a, dir, ['collect', '--metrics-file', file('collect-a.prom'), '--out-dir', 'raw-a'])).code,
      ).toBe(0);
      expect(
        (await run(b, dir, ['collect', '--metrics-file', file('collect-b.prom'), '--out-dir', 'raw-b'])).code,
      ).toBe(0);
      // A usage error of a run that never learnt its site.
      expect(
        (await runCli(['snapshot', '--metrics-file', file('snapshot-c.prom'), '--quiet'], { cwd: dir })).code,
      ).toBe(2);
      const names = readdirSync(textfile).sort();
      expect(names).toEqual([
        'collect-a.prom',
        'collect-b.prom',
        'snapshot-a.prom',
        'snapshot-b.prom',
        'snapshot-c.prom',
      ]);
      for (const n of names) {
        const check = promtoolCheck(readFileSync(file(n), 'utf8'));
        expect([n, check.code, check.output]).toEqual([n, 0, '']);
      }
      const exporter = await startNodeExporter(textfile);
      try {
        const scraped = await exporter.scrape();
        expect(scraped.status).toBe(200);
        const got = new Set(series(scraped.body));
        for (const n of names)
          for (const s of series(readFileSync(file(n), 'utf8'))) expect(got.has(s), `${n}: ${s}`).toBe(true);
        expect(scraped.body).toMatch(/^node_textfile_scrape_error 0$/m);
        expect(exporter.log()).not.toMatch(/error/i);
      } finally {
        await exporter.stop();
      }
    });

    it("(the check above can fail) two sites' files without the site label collide in node_exporter", async () => {
      const dir = tmpDir();
      const textfile = join(dir, 'textfile');
      mkdirSync(textfile);
      for (const [site, name] of [
        [a, 'a.prom'],
        [b, 'b.prom'],
      ] as const) {
        expect(
          (await run(site, dir, ['collect', '--metrics-file', join(dir, name), '--out-dir', `raw-${name}`])).code,
        ).toBe(0);
        writeFileSync(join(textfile, name), readFileSync(join(dir, name), 'utf8').replace(/,site="[^"]*"/g, ''));
      }
      const exporter = await startNodeExporter(textfile);
      try {
        await exporter.scrape();
        expect(exporter.log()).toMatch(/was collected before with the same name and label values/);
      } finally {
        await exporter.stop();
      }
    });
  },
);
