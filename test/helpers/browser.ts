import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's chromium (scripts/test-prereqs.mjs installs it); playwright-core downloads no browser. */
const CHROMIUM = '/usr/bin/chromium';
/** Off the network: no background requests, updates, sync or first-run pages of the browser's own. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

export interface OpenedPage {
  readonly page: Page;
  /** Every request the page tried, by URL, the page's own file included. */
  readonly requests: string[];
  readonly consoleErrors: string[];
  readonly dialogs: string[];
  close(): Promise<void>;
}

/** Opens a file in a new context that records every request, console error and dialog. */
export async function openFile(
  browser: Browser,
  file: string,
  opts: { javaScriptEnabled?: boolean; width?: number; height?: number } = {},
): Promise<OpenedPage> {
  const context = await browser.newContext({
    javaScriptEnabled: opts.javaScriptEnabled ?? true,
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 800 },
  });
  const page = await context.newPage();
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  const dialogs: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(e.message));
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return { page, requests, consoleErrors, dialogs, close: () => context.close() };
}
