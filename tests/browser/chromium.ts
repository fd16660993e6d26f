import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it when missing). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = resolve(import.meta.dir, '../screenshots');

export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };

/**
 * Launches the browser. No fallback and no skip: a machine without Chromium fails the browser
 * tests with a message saying how to install it.
 */
export async function launchChromium(): Promise<Browser> {
  try {
    return await chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  } catch (err) {
    throw new Error(
      `cannot launch Chromium at ${CHROMIUM_PATH} (install it: apt-get install -y chromium): ${(err as Error).message}`,
    );
  }
}

/**
 * Saves `<name>.desktop.png` and `<name>.phone.png` (390 px wide) of the whole page, for a person
 * to look at; tests/screenshots/ is not committed.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const before = page.viewportSize() ?? DESKTOP;
  for (const [label, size] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(size);
    // Let the chart redraw at the new width (ResizeObserver → next frame).
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.${label}.png`), fullPage: true });
  }
  await page.setViewportSize(before);
}
