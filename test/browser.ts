// Real Chromium (Debian's, driven by playwright-core) against a real server, for the dashboard's
// end-to-end tests. Every page a test visits can be screenshotted into build/test-output/screenshots/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { repoRoot, type TestServer } from './harness.js';

export const chromiumPath = process.env.SKIFF_CHROMIUM ?? '/usr/bin/chromium';
export const screenshotDir = join(repoRoot, 'build', 'test-output', 'screenshots');

export interface Ui {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** what the page logged as errors and uncaught exceptions (a test may assert it is empty) */
  errors: string[];
  /** opens a dashboard path (`/ui/default/jobs/pi`) on the server */
  open(path: string): Promise<void>;
  /**
   * waits until the page's own location passes `check`, read in the page: Playwright's `page.url()`
   * learns of a same-document navigation (pushState, replaceState) from an event that may come after
   * the click that made it, on a busy machine
   */
  urlBecomes(check: (u: URL) => boolean, what: string): Promise<URL>;
  /** writes build/test-output/screenshots/<name>.png */
  shot(name: string): Promise<string>;
  close(): Promise<void>;
}

export async function openUi(server: TestServer, opts: { width?: number; height?: number; dark?: boolean } = {}): Promise<Ui> {
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: opts.height ?? 800 }, colorScheme: opts.dark ? 'dark' : 'light' });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  return {
    browser,
    context,
    page,
    errors,
    async open(path: string) {
      await page.goto(server.url + path);
    },
    async urlBecomes(check: (u: URL) => boolean, what: string) {
      const until = Date.now() + 30_000;
      for (;;) {
        const u = new URL(await page.evaluate(() => window.location.href));
        if (check(u)) return u;
        if (Date.now() > until) throw new Error(`the page's URL never became ${what}: it is ${u.href}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async shot(name: string) {
      mkdirSync(screenshotDir, { recursive: true });
      const file = join(screenshotDir, `${name}.png`);
      await page.screenshot({ path: file });
      return file;
    },
    async close() {
      await browser.close();
    },
  };
}
