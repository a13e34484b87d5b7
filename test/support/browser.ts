/**
 * Debian's Chromium driven by playwright-core, for the real-browser tests. Locally, a missing
 * browser makes those tests skip with a clear message; in CI (CI=true) it is a failure.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { missing } from './dependencies.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Screenshots for people to look at; git ignores the folder. */
export const ARTIFACTS_DIR = join(process.cwd(), 'test-artifacts');

/** Why browser tests cannot run here, or null when they can. Throws in CI instead of skipping. */
export function browserUnavailable(): string | null {
  if (existsSync(CHROMIUM_PATH)) return null;
  return missing(`Chromium not found at ${CHROMIUM_PATH}: install it with "apt-get install -y chromium" (or set CHROMIUM_PATH); skipping browser tests`);
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // Flags that keep Chromium off the network: this machine allows loopback only.
    args: [
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

export function screenshotPath(name: string): string {
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  mkdirSync(dirname(path), { recursive: true });
  return path;
}
