/**
 * Debian's Chromium driven by playwright-core, for the real-browser tests. Locally, a missing
 * browser makes those tests skip with a clear message; in CI (CI=true) it is a failure.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { missing } from './dependencies.js';

/**
 * Chromium's headless shell (Debian's chromium-headless-shell: the same Chromium, built without
 * the windowed browser around the pages), as Playwright itself runs Chromium headless; else the
 * full browser (chromium), which runs the same pages at about twice the CPU time (docs/performance.md,
 * "The test suite's time"). CHROMIUM_PATH names another.
 */
const CHROMIUM_BUILDS = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'];
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? CHROMIUM_BUILDS.find((path) => existsSync(path)) ?? CHROMIUM_BUILDS[0]!;

/** Screenshots for people to look at; git ignores the folder. */
export const ARTIFACTS_DIR = join(process.cwd(), 'test-artifacts');

/** Why browser tests cannot run here, or null when they can. Throws in CI instead of skipping. */
export function browserUnavailable(): string | null {
  if (existsSync(CHROMIUM_PATH)) return null;
  return missing(`Chromium not found at ${CHROMIUM_PATH}: install it with "apt-get install -y chromium-headless-shell" (or set CHROMIUM_PATH); skipping browser tests`);
}

/**
 * The features Playwright turns off in every Chromium it launches (its chromiumSwitches.js), which
 * must be named again here: Chromium reads only the last --disable-features.
 */
const PLAYWRIGHT_DISABLED_FEATURES = [
  'AcceptCHFrame',
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'DialMediaRouteProvider',
  'GlobalMediaControls',
  'HttpsUpgrades',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'Translate',
  'AutoDeElevate',
];

/**
 * The address bar's suggestion popup, a page of the browser's own (chrome://omnibox-popup) that
 * Chromium loads in a renderer of its own for every window, even headless, where no one can
 * type in an address bar. With a window per browser context, it cost the browser tests about a
 * third of the full browser's CPU time; no page under test is any different without it. (The
 * headless shell has no address bar: the flag changes nothing there.)
 */
const OMNIBOX_POPUP_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'WebUIOmniboxFullPopup'];

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      // Flags that keep Chromium off the network: this machine allows loopback only.
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...OMNIBOX_POPUP_FEATURES].join(',')}`,
    ],
  });
}

export function screenshotPath(name: string): string {
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  mkdirSync(dirname(path), { recursive: true });
  return path;
}
