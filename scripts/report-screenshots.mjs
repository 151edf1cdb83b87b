#!/usr/bin/env node
// Renders the report screenshots of the README (docs/report.png,
// docs/report-narrow.png) from the shipped recordings, as two nights of one
// site (platform-3.13.8 the night before platform-3.14.1, so changes show),
// both loaded into a history database, in Debian's chromium driven by
// playwright-core, off the network. After `npm run build`:
//   node scripts/report-screenshots.mjs
// Check the result by eye.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = (...args) =>
  execFileSync(process.execPath, [join(root, 'bin', 'svc-snapshot.js'), ...args, '--quiet'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
const work = mkdtempSync(join(tmpdir(), 'svc-report-shots-'));
try {
  const older = join(work, 'svc-snapshot-2026-11-20');
  const newer = join(work, 'svc-snapshot-2026-11-21');
  cli('--replay', join(root, 'recordings', 'platform-3.13.8'), '--out-dir', older);
  // The recordings share one time: the older one is said to be a night earlier.
  const manifest = join(older, '_snapshot-manifest.json');
  writeFileSync(
    manifest,
    JSON.stringify(
      { ...JSON.parse(readFileSync(manifest, 'utf8')), time: '2026-11-20T02:00:00.000Z', date: '2026-11-20' },
      null,
      2,
    ),
  );
  const history = join(work, 'history.sqlite');
  cli('--replay', join(root, 'recordings', 'platform-3.14.1'), '--out-dir', newer);
  cli('history', 'load', older, newer, `--history=${history}`);
  const page = join(work, 'report.html');
  cli('report', newer, '--history', history, '--out', page);

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
  try {
    for (const [name, width, height] of [
      ['report', 1280, 2300],
      ['report-narrow', 390, 844],
    ]) {
      const context = await browser.newContext({ viewport: { width, height }, javaScriptEnabled: false });
      const tab = await context.newPage();
      tab.on('request', (r) => {
        if (r.url() !== pathToFileURL(page).href) throw new Error(`the page asked for ${r.url()}`);
      });
      await tab.goto(pathToFileURL(page).href);
      await tab.screenshot({ path: join(root, 'docs', `${name}.png`) });
      await context.close();
    }
  } finally {
    await browser.close();
  }
  console.log('wrote docs/report.png docs/report-narrow.png');
} finally {
  rmSync(work, { recursive: true, force: true });
}
