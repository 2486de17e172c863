/**
 * Headless Chromium for the tests that open exported pages: where the browser is (CHROMIUM_PATH, else
 * Debian's), whether it is there, and a launch with no network chatter of its own.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** True when the browser is installed (.ci/run installs it). */
export const hasChromium = existsSync(CHROMIUM);

/** Why a browser test is skipped, for its title; empty when it runs. */
export const chromiumSkipNote = hasChromium
  ? ''
  : ` (skipped: no browser at ${CHROMIUM}; install chromium or set CHROMIUM_PATH)`;

/** Starts the browser headless, with nothing of its own going to the network. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
