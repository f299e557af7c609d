// The pages in Chromium: each loads without a console error or a request beyond
// loopback, has no serious or critical axe-core violation, and fits a phone
// (375 px); the changelog shows what the catalog diff says, by name, and its
// locale picker switches names; the catalog pages show every item by name with
// its icon from the media mirror, and a Premier logo recolored; a catalog
// page's search box lists what a query matches; /docs shows every operation of
// the spec.
// Expectations come from the server's own JSON routes, never from constants.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { serve, importVersions, api, browser, mirrorOf, open, axe, screenshot, repoRoot, UA } from '../lib/server.mjs';

const fixtures = path.join(repoRoot, 'fixtures', 'versions');
const snapshots = fs.readdirSync(fixtures).sort((a, b) => parseInt(a) - parseInt(b)).map((d) => path.join(fixtures, d));

let stored, embedded, mirrored, b;
const shots = [];

before(async () => {
  // Stored: the sample versions imported one by one, as an operator would, so
  // /v1/diff/latest is the diff the import stored.
  stored = await serve(['--data', importVersions(snapshots)]);
  embedded = await serve();
  b = await browser();
  // Mirrored: the embedded sample with a media mirror holding the weapons' icons
  // and the Premier logos' base images.
  const urls = [];
  for (const route of ['/v1/weapons', '/v1/premier/logos']) {
    for (const item of await api(embedded.base, route)) if (item.displayIcon) urls.push(item.displayIcon);
  }
  mirrored = await serve(['--media-dir', await mirrorOf(b.context, urls)]);
});

after(async () => {
  await b?.close();
  stored?.stop();
  embedded?.stop();
  mirrored?.stop();
  if (shots.length) console.log('screenshots:\n  ' + shots.join('\n  '));
});

// name is how the changelog names an item: its display name, title or asset
// object name, the first that is a non-empty string.
// HTML reads a CR LF in text as LF, so names are compared that way.
function nameOf(item) {
  for (const f of ['displayName', 'titleText', 'assetObjectName']) {
    if (typeof item[f] === 'string' && item[f] !== '') return item[f].replace(/\r\n?/g, '\n');
  }
  return null;
}

// check loads a page at desktop and phone width: no console error, nothing
// fetched from elsewhere but icons, no serious axe violation, no sideways scroll
// on a phone. It returns the desktop page for more checks.
async function check(t, base, route, shot) {
  const { page, res, errors } = await open(b.context, base + route);
  assert.equal(res.status(), 200, route);
  assert.match(res.headers()['content-type'], /^text\/html; charset=utf-8$/, route);
  await page.waitForLoadState('networkidle');
  shots.push(await screenshot(page, shot));
  const violations = await axe(page);
  assert.deepEqual(violations, [], `${route}: axe-core violations`);

  const phone = await open(b.context, base + route, { width: 375, height: 812 });
  await phone.page.waitForLoadState('networkidle');
  shots.push(await screenshot(phone.page, shot + '-375'));
  const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${route} at 375 px scrolls sideways by ${overflow} px`);
  assert.deepEqual([...errors, ...phone.errors], [], `${route}: console errors`);
  assert.deepEqual(b.outside.refused, [], `${route}: requests beyond loopback`);
  await phone.page.close();
  return page;
}

test('landing page names the served version and every retained one', async (t) => {
  for (const [name, srv] of [['stored', stored], ['embedded', embedded]]) {
    const page = await check(t, srv.base, '/', `home-${name}`);
    const version = await api(srv.base, '/v1/version');
    const versions = await api(srv.base, '/v1/versions');
    const text = await page.textContent('main');
    assert.ok(text.includes(version.manifestId) && text.includes(version.version), 'the served version');
    for (const v of versions) assert.ok(text.includes(v.manifestId), `retained ${v.manifestId}`);
    for (const href of ['/docs', '/changes', '/v1/metrics', '/openapi.yaml']) {
      assert.ok(await page.locator(`a[href="${href}"]`).count() > 0, `a link to ${href}`);
    }
    // The example command names the address the browser asked.
    const example = await page.locator('#start ~ pre code').textContent();
    assert.ok(example.includes(`'${srv.base}/v1/weapons?language=ja-JP'`), `the example names ${srv.base}: ${example}`);
    await page.close();
  }
});

// Chromium reports the status of a page it shows in the console; that is the
// point of these pages, not an error of theirs.
const notStatus = (errors) => errors.filter((e) => !/the server responded with a status of 40\d/.test(e));

test('an unknown page, changelog and catalog are pages that say 404 and lead back', async (t) => {
  for (const [route, shot, back] of [['/nope', 'error-404', ['/']], ['/changes/zzz/yyy', 'error-404-changes', ['/', '/changes']], ['/browse/nope', 'error-404-browse', ['/', '/browse']]]) {
    const { page, res, errors } = await open(b.context, stored.base + route);
    assert.equal(res.status(), 404, route);
    assert.match(res.headers()['content-type'], /^text\/html; charset=utf-8$/, route);
    const heading = page.getByRole('heading', { level: 1 });
    assert.ok(await heading.isVisible(), `${route}: a visible heading`);
    assert.equal((await heading.textContent()).trim(), 'Page not found', route);
    for (const href of back) {
      assert.ok(await page.locator(`main a[href="${href}"]`).isVisible(), `${route}: a visible link back to ${href}`);
    }
    shots.push(await screenshot(page, shot));
    assert.deepEqual(await axe(page), [], `${route}: axe-core violations`);
    const phone = await open(b.context, stored.base + route, { width: 375, height: 812 });
    const overflow = await phone.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${route} at 375 px scrolls sideways by ${overflow} px`);
    await phone.page.close();
    // The way back leads to a page that answers.
    const [home] = await Promise.all([page.waitForNavigation(), page.locator(`main a[href="${back.at(-1)}"]`).click()]);
    assert.equal(home.status(), 200, `${route}: the link back to ${back.at(-1)}`);
    assert.deepEqual(notStatus([...errors, ...phone.errors]), [], `${route}: console errors`);
    assert.deepEqual(b.outside.refused, [], `${route}: requests beyond loopback`);
    await page.close();
  }
});

test('a trailing slash leads to the page without it', async () => {
  for (const [route, want] of [['/docs/', '/docs'], ['/changes/?language=ja-JP', '/changes?language=ja-JP']]) {
    const { page, res } = await open(b.context, stored.base + route);
    assert.equal(res.status(), 200, route);
    assert.equal(page.url(), stored.base + want, route);
    const hop = await res.request().redirectedFrom()?.response();
    assert.equal(hop?.status(), 301, `${route}: the redirect`);
    await page.close();
  }
});

test('the changelog lists what the diff added, removed and changed, by name', async (t) => {
  const diff = await api(stored.base, '/v1/diff/latest');
  const page = await check(t, stored.base, '/changes', 'changes');
  let added = 0;
  for (const [cat, cd] of Object.entries(diff.categories)) {
    for (const [kind, uuids] of [['added', cd.added], ['removed', cd.removed], ['changed', cd.changed.map((c) => c.uuid)]]) {
      const rows = page.locator(`[data-kind="${kind}"][data-category="/v1/${cat}"] > li`);
      assert.equal(await rows.count(), uuids.length, `${cat} ${kind}`);
      if (kind === 'removed') continue;
      for (const uuid of uuids) {
        const item = await api(stored.base, `/v1/${cat}/${uuid}`);
        const shown = await page.locator(`[data-kind="${kind}"][data-category="/v1/${cat}"] > li[data-uuid="${uuid}"] .name`).textContent();
        assert.equal(shown, nameOf(item) ?? shown, `${cat} ${uuid} name`);
        const href = await page.locator(`[data-kind="${kind}"][data-category="/v1/${cat}"] > li[data-uuid="${uuid}"] a`).getAttribute('href');
        assert.equal(href, `/browse/${cat.replaceAll('/', '-')}/${uuid}`);
      }
      if (kind === 'added') added += uuids.length;
    }
  }
  assert.equal(added, diff.summary.totalAdded);
  assert.ok(added > 0, 'the sample diff adds items');
  t.diagnostic(`${added} items added from ${diff.fromVersion} to ${diff.toVersion}, each listed by name`);
  await page.close();

  // The embedded data holds its own 14→15 diff (computed at start-up): its
  // changelog must say the same.
  const emb = await check(t, embedded.base, '/changes', 'changes-embedded');
  for (const [cat, cd] of Object.entries(diff.categories)) {
    assert.equal(await emb.locator(`[data-kind="added"][data-category="/v1/${cat}"] > li`).count(), cd.added.length, `embedded ${cat} added`);
  }
  await emb.close();
});

test('the locale picker switches names to Japanese', async (t) => {
  const { page, errors } = await open(b.context, stored.base + '/changes');
  await page.selectOption('#language', 'ja-JP');
  await Promise.all([page.waitForURL(/language=ja-JP/), page.click('form.picker button[type="submit"]')]);
  await page.waitForLoadState('networkidle');
  shots.push(await screenshot(page, 'changes-ja-JP'));
  const diff = await api(stored.base, '/v1/diff/latest');
  let japanese = 0;
  for (const [cat, cd] of Object.entries(diff.categories)) {
    for (const uuid of [...cd.added, ...cd.changed.map((c) => c.uuid)]) {
      const ja = nameOf(await api(stored.base, `/v1/${cat}/${uuid}?language=ja-JP`));
      const en = nameOf(await api(stored.base, `/v1/${cat}/${uuid}`));
      const row = page.locator(`[data-category="/v1/${cat}"] > li[data-uuid="${uuid}"] .name`);
      if (ja === null) continue;
      assert.equal(await row.textContent(), ja, `${cat} ${uuid} in ja-JP`);
      if (ja !== en) {
        japanese++;
        assert.equal(await row.getAttribute('lang'), 'ja-JP');
      }
    }
  }
  assert.ok(japanese > 0, 'the data translates some listed item to Japanese; the page must show it');
  t.diagnostic(`${japanese} names shown in Japanese`);
  assert.deepEqual(errors, []);
  assert.deepEqual(await axe(page), []);
  await page.close();
});

// iconsShown scrolls every icon of the list into view (they load lazily) and
// returns each one's src, after checking it loaded with a width.
async function iconsShown(page, list) {
  const srcs = [];
  for (const img of await page.locator(`${list} img`).all()) {
    await img.scrollIntoViewIfNeeded();
    await img.evaluate((el) => (el.complete ? null : new Promise((r) => { el.onload = el.onerror = r; })));
    const [src, width] = await img.evaluate((el) => [el.getAttribute('src'), el.naturalWidth]);
    assert.ok(width > 0, `icon ${src} did not load`);
    srcs.push(src);
  }
  return srcs;
}

test('the weapons catalog in Japanese names every weapon as the API does, with its icon from the mirror', async (t) => {
  const srv = mirrored;
  {
    const page = await check(t, srv.base, '/browse/weapons?language=ja-JP', 'browse-weapons-ja-JP');
    const weapons = await api(srv.base, '/v1/weapons?language=ja-JP');
    const english = await api(srv.base, '/v1/weapons');
    assert.equal(await page.locator('ul.items > li').count(), weapons.length);
    let japanese = 0;
    for (const [i, w] of weapons.entries()) {
      const row = page.locator(`ul.items > li[data-uuid="${w.uuid}"]`);
      assert.equal(await row.locator('.name').textContent(), w.displayName, `${w.uuid} name`);
      assert.equal(await row.locator('a').getAttribute('href'), `/browse/weapons/${w.uuid}?language=ja-JP`);
      if (w.displayName !== english[i].displayName) {
        japanese++;
        assert.equal(await row.locator('.name').getAttribute('lang'), 'ja-JP');
      }
      const src = await row.locator('img').getAttribute('src');
      assert.match(src, /^\/media\/[0-9a-f]{64}$/, `${w.uuid} icon from the mirror`);
    }
    assert.ok(japanese > 0, 'the sample names some weapon in Japanese');
    const outside = b.outside.images.length;
    const srcs = await iconsShown(page, 'ul.items');
    assert.equal(srcs.length, weapons.length, 'every weapon has its icon');
    assert.equal(b.outside.images.length, outside, 'no icon from the public media host');
    t.diagnostic(`${weapons.length} weapons, ${japanese} named in Japanese, ${srcs.length} icons shown`);

    // Its item page: the name, every top-level field, the JSON route.
    const w = weapons[0];
    await Promise.all([page.waitForURL(/\/browse\/weapons\/.*language=ja-JP/), page.locator(`ul.items > li[data-uuid="${w.uuid}"] a`).click()]);
    const item = await check(t, srv.base, new URL(page.url()).pathname + '?language=ja-JP', 'browse-weapon-ja-JP');
    assert.equal((await item.locator('h1 .name').textContent()), w.displayName);
    const keys = await item.$$eval('#fields + dl.fields > dt', (els) => els.map((e) => e.textContent));
    assert.deepEqual(keys, Object.keys(w), 'every field, in order');
    assert.ok(await item.locator(`a[href="/v1/weapons/${w.uuid}?language=ja-JP"]`).count() > 0, 'a link to the JSON');
    await iconsShown(item, '.item-head');
    await item.close();
    await page.close();
  }
});

test('a Premier logo\'s page shows it recolored in team colors by the server', async (t) => {
  const logo = (await api(mirrored.base, '/v1/premier/logos')).find((l) => l.displayIcon);
  const page = await check(t, mirrored.base, `/browse/premier-logos/${logo.uuid}`, 'browse-premier-logo');
  const img = page.locator('figure.recolored img');
  const [src, width] = await img.evaluate((el) => new Promise((r) => {
    const done = () => r([el.getAttribute('src'), el.naturalWidth]);
    if (el.complete) done(); else el.onload = el.onerror = done;
  }));
  assert.match(src, new RegExp(`^/v1/premier/logos/${logo.uuid}/image\\?`), 'the recoloring route');
  assert.ok(width > 0, `the recolored logo ${src} did not load`);
  const res = await fetch(mirrored.base + src, { headers: { 'User-Agent': UA } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'image/png');
  // The base's red marker disc is the primary color now: the answer differs from the base.
  const base = await (await fetch(mirrored.base + (await page.locator('.item-head img').getAttribute('src')))).arrayBuffer();
  assert.notDeepEqual(Buffer.from(await res.arrayBuffer()), Buffer.from(base), 'recolored, not the base image');
  await page.close();
});

// search types query into a catalog page's search box and submits it; it
// returns the page's answer and the uuids listed.
async function search(page, query) {
  await page.fill('#q', query);
  const [res] = await Promise.all([page.waitForNavigation(), page.click('form.search button[type="submit"]')]);
  await page.waitForLoadState('networkidle');
  const listed = await page.$$eval('ul.items > li', (els) => els.map((e) => e.dataset.uuid));
  return { res, listed };
}

test('a catalog page\'s search box lists exactly the items q matches and keeps the query; a bad query shows why', async (t) => {
  const srv = stored;
  const skins = await api(srv.base, '/v1/weapons/skins');
  const all = await api(srv.base, '/v1/weapons/skins?language=all');
  const ja = await api(srv.base, '/v1/weapons/skins?language=ja-JP');
  const skin = skins.find((s) => s.levels.length > 1 && s.contentTierUuid && ja.find((j) => j.uuid === s.uuid).displayName !== s.displayName);
  assert.ok(skin, 'the sample has a skin of a tier, with levels, named in Japanese');
  const jaName = ja.find((j) => j.uuid === skin.uuid).displayName;
  const { page, errors } = await open(b.context, srv.base + '/browse/weapons-skins');
  // Expected lists are the full list filtered here, not the server's answers to q.
  for (const [query, want] of [
    [`levels.uuid=${skin.levels[1].uuid}`, [skin.uuid]],
    [`contentTierUuid=${skin.contentTierUuid}`, skins.filter((s) => s.contentTierUuid === skin.contentTierUuid).map((s) => s.uuid)],
    [`name:"${jaName}"`, all.filter((s) => Object.values(s.displayName).some((n) => n.toLowerCase().includes(jaName.toLowerCase()))).map((s) => s.uuid)],
  ]) {
    const { res, listed } = await search(page, query);
    assert.equal(res.status(), 200, query);
    assert.deepEqual(listed, want, `${query}: the items listed`);
    assert.equal(await page.inputValue('#q'), query, `${query}: the box keeps the query`);
    assert.equal(new URL(page.url()).searchParams.get('q'), query);
    t.diagnostic(`${query}: ${listed.length} of ${skins.length} skins`);
  }
  assert.ok(skins.filter((s) => s.contentTierUuid === skin.contentTierUuid).length > 1, 'a tier with several skins');
  // The name found in any locale; the page in Japanese keeps the query when the language changes.
  await page.selectOption('#language', 'ja-JP');
  await Promise.all([page.waitForURL(/language=ja-JP/), page.click('form.picker button[type="submit"]')]);
  assert.equal(await page.inputValue('#q'), `name:"${jaName}"`, 'the picker keeps the query');
  assert.equal(await page.locator(`ul.items > li[data-uuid="${skin.uuid}"] .name`).textContent(), jaName);
  const { listed: english } = await search(page, `name:"${skin.displayName}"`);
  assert.ok(english.includes(skin.uuid) && new URL(page.url()).searchParams.get('language') === 'ja-JP', 'a search keeps the language');
  shots.push(await screenshot(page, 'browse-search-ja-JP'));
  assert.deepEqual(errors, [], 'console errors');
  assert.deepEqual(await axe(page), [], 'axe-core violations');

  // A query the API refuses: 400, the page says what the API says, the box keeps it, nothing listed.
  const bad = 'level.uuid=<b>x</b>';
  const apiRes = await fetch(srv.base + '/v1/weapons/skins?q=' + encodeURIComponent(bad), { headers: { 'User-Agent': UA } });
  assert.equal(apiRes.status, 400);
  const why = (await apiRes.json()).error.replace(/^q: /, '').replace(/; \/openapi\.yaml.*$/, '');
  const { res, listed } = await search(page, bad);
  assert.equal(res.status(), 400);
  assert.equal(await page.inputValue('#q'), bad, 'the box keeps the bad query');
  assert.deepEqual(listed, [], 'nothing listed');
  const shown = await page.locator('#q-error').textContent();
  assert.ok(shown.slice(1).includes(why.slice(1)), `the page says ${why}: ${shown}`);
  assert.equal(await page.locator('#q-error b').count(), 0, 'the query shown as text, not markup');
  shots.push(await screenshot(page, 'browse-search-error'));
  assert.deepEqual(await axe(page), [], 'axe-core violations on the bad query\'s page');
  await page.close();
  await (await check(t, srv.base, '/browse/weapons-skins?q=' + encodeURIComponent(`name:"${skin.displayName}"`), 'browse-search')).close();
});

test('the list of catalogs counts each one\'s items', async (t) => {
  const page = await check(t, stored.base, '/browse', 'browse');
  for (const cat of ['weapons', 'weapons/skins', 'agents']) {
    const items = await api(stored.base, `/v1/${cat}`);
    const row = page.locator('tr', { has: page.locator(`a[href="/browse/${cat.replace('/', '-')}"]`) });
    assert.equal((await row.locator('td[data-label="Items"]').textContent()).trim(), String(items.length), cat);
  }
  await page.close();
});

test('the docs page shows every operation of the spec', async (t) => {
  const spec = await (await fetch(stored.base + '/openapi.json')).json();
  const ops = [];
  for (const item of Object.values(spec.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'].includes(method)) ops.push(op.operationId);
    }
  }
  const page = await check(t, stored.base, '/docs', 'docs');
  await page.waitForSelector('[id^="operation/"]');
  const shown = await page.$$eval('[id^="operation/"]', (els) => els.map((e) => e.id.slice('operation/'.length)));
  assert.deepEqual([...new Set(shown)].sort(), [...ops].sort());
  t.diagnostic(`${ops.length} operations in openapi.json, all rendered`);
  await page.close();
});

test('pages need no User-Agent; the API does', async () => {
  for (const p of ['/', '/docs', '/changes', '/browse', '/browse/weapons']) {
    const res = await fetch(stored.base + p, { headers: { 'User-Agent': '' } });
    assert.equal(res.status, 200, p);
  }
  const res = await fetch(stored.base + '/v1/version', { headers: { 'User-Agent': '' } });
  assert.equal(res.status, 400);
  void UA;
});
