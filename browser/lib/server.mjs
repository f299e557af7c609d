// Starts `refdata serve` on a free loopback port and browser sessions on Debian's
// chromium, for the page tests. Nothing here reaches beyond loopback: requests to
// other hosts are answered by the test (images) or refused (anything else).
import { spawn, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url)); // browser/lib
export const repoRoot = path.resolve(here, '..', '..');
export const bin = process.env.REFDATA_BIN || path.join(repoRoot, 'bin', 'refdata');
export const outDir = process.env.SCREENSHOT_DIR || path.join(repoRoot, 'browser', 'out');
export const UA = 'refdata-browser-test/1.0 (+http://localhost)';

// serve starts the binary with args and resolves to its base URL once it logs the
// address it bound (it listens on port 0, so the port is always free) and /readyz
// says its data is served (it listens before it loads).
export async function serve(args = []) {
  const child = spawn(bin, ['serve', '--addr', '127.0.0.1:0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  const base = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('refdata serve did not start:\n' + log)), 60_000);
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const m = /"addr":"(127\.0\.0\.1:\d+)"/.exec(log) || /addr=(127\.0\.0\.1:\d+)/.exec(log);
      if (m) { clearTimeout(timer); resolve('http://' + m[1]); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`refdata serve exited ${code}:\n${log}`)); });
  });
  const deadline = Date.now() + 120_000;
  while (!(await fetch(base + '/readyz').catch(() => null))?.ok) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('refdata serve never became ready:\n' + log);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { base, stop: () => child.kill('SIGTERM'), log: () => log };
}

// importVersions makes a version store from snapshot directories, in order, with
// `refdata import`, so the server has stored diffs as in production.
export function importVersions(dirs) {
  const store = fs.mkdtempSync(path.join(os.tmpdir(), 'refdata-store-'));
  for (const d of dirs) execFileSync(bin, ['import', '--data', store, d], { stdio: 'pipe' });
  return store;
}

export async function api(base, p) {
  const res = await fetch(base + p, { headers: { 'User-Agent': UA } });
  if (!res.ok) throw new Error(`GET ${p}: ${res.status} ${await res.text()}`);
  return (await res.json()).data;
}

// mirrorOf writes a media mirror in the form `refdata sync --media` leaves it
// (docs/sync.md § Media: DIR/<sha256>, and DIR/index.jsonl naming each URL's
// file) holding a PNG for each URL, drawn by the browser: a Premier logo's
// marker colors (blue outline, red and green shapes on black), one of eight
// arrangements, so several URLs share a file as real icons may.
export async function mirrorOf(context, urls) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'refdata-media-'));
  const page = await context.newPage();
  const pngs = await page.evaluate((n) => Array.from({ length: n }, (_, i) => {
    const c = document.createElement('canvas');
    c.width = c.height = 64;
    const g = c.getContext('2d');
    const disc = (r, color) => { g.fillStyle = color; g.beginPath(); g.arc(32, 32, r, 0, 2 * Math.PI); g.fill(); };
    disc(31, '#0000ff');
    disc(27, '#000000');
    disc(22, '#ff0000');
    g.fillStyle = '#00ff00';
    g.fillRect(16 + (i % 8) * 2, 26, 20, 12);
    return c.toDataURL('image/png').split(',')[1];
  }), urls.length);
  await page.close();
  const index = urls.map((url, i) => {
    const bytes = Buffer.from(pngs[i], 'base64');
    const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
    fs.writeFileSync(path.join(dir, sha256), bytes);
    return JSON.stringify({ url, sha256, contentType: 'image/png', size: bytes.length }) + '\n';
  });
  fs.writeFileSync(path.join(dir, 'index.jsonl'), index.join(''));
  return dir;
}

const placeholder = '<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48"><rect width="48" height="48" fill="#c9d1d9"/><path d="M8 36l10-12 8 9 6-7 8 10z" fill="#8c959f"/></svg>';

// browser opens chromium with a fresh profile. Every request leaving loopback is
// recorded: images (item icons are the data's https URLs) get a placeholder,
// anything else is refused, and the test fails on either kind it did not expect.
export async function browser() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'refdata-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
    viewport: { width: 1280, height: 900 },
  });
  const outside = { images: [], refused: [] };
  await context.route('**/*', (route) => {
    const req = route.request();
    const u = new URL(req.url());
    if (u.hostname === '127.0.0.1' || u.protocol === 'data:' || u.protocol === 'blob:') return route.continue();
    if (req.resourceType() === 'image') {
      outside.images.push(req.url());
      return route.fulfill({ status: 200, contentType: 'image/svg+xml', body: placeholder });
    }
    outside.refused.push(req.url());
    return route.abort('blockedbyclient');
  });
  return {
    context, outside,
    close: async () => { await context.close(); fs.rmSync(profile, { recursive: true, force: true }); },
  };
}

// open loads a page, collecting console errors and uncaught exceptions.
export async function open(context, url, viewport) {
  const page = await context.newPage();
  if (viewport) await page.setViewportSize(viewport);
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push('uncaught: ' + e.message));
  const res = await page.goto(url, { waitUntil: 'load' });
  return { page, res, errors };
}

const axeSource = fs.readFileSync(path.join(here, '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

// axe runs axe-core in the page (evaluated, not injected as a <script>, so the
// page's Content-Security-Policy stays as served) and returns the serious and
// critical violations.
export async function axe(page) {
  await page.evaluate(axeSource);
  const results = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.length}×: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')})`);
}

export async function screenshot(page, name) {
  fs.mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, name + '.png');
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
