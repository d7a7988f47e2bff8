// The browser check: out/bundle.js (bundle.mjs) on page.html in Debian's Chromium ($CHROMIUM, default
// /usr/bin/chromium), driven by playwright-core, which downloads no browser. The form must render the choices
// read from the fake store, and a field changed by typing and choosing must reach the machine config.
// SCREENSHOT=file writes a picture of the form. With --built DIR (make ui-extension's ui/dist-pkg/hcivm-<version>)
// the page loads the built extension instead: Vue's global build, the extension's UMD, its plugin function
// called with a fake plugin, and the component it registered under machine-config/hcivm.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';

if (!fs.existsSync(executablePath)) {
  console.error(`browser check: no Chromium at ${ executablePath } (apt-get install -y chromium, or set CHROMIUM)`);
  process.exit(1);
}
const built = process.argv[2] === '--built' ? path.resolve(process.argv[3] || '') : '';
let pageFile = path.join(here, 'page.html');

if (built) {
  const umd = fs.readdirSync(built).find((f) => /^hcivm-.*\.umd\.min\.js$/.test(f));

  if (!umd) {
    console.error(`browser check: no hcivm-<version>.umd.min.js in ${ built }`);
    process.exit(1);
  }
  const name = umd.replace(/\.umd\.min\.js$/, '');
  const vue = path.join(here, '../node_modules/vue/dist/vue.global.prod.js');

  pageFile = path.join(here, 'out/page-built.html');
  fs.writeFileSync(pageFile, fs.readFileSync(path.join(here, 'page.html'), 'utf8').replace('<script src="out/bundle.js"></script>', `
<script src="file://${ vue }"></script>
<script src="file://${ path.join(here, 'out/harness.js') }"></script>
<script src="file://${ path.join(built, umd) }"></script>
<script>
  const registered = {};
  window[${ JSON.stringify(name) }].default({ register: (type, name, fn) => { registered[type + '/' + name] = fn; } });
  registered['machine-config/hcivm']().then((m) => window.hcivmStart(m.default || m));
</script>`));
}
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'hcivm-chromium-'));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  args:     ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  viewport: { width: 1200, height: 900 },
});
const fail = (msg) => {
  throw new Error(`browser check: ${ msg }`);
};

try {
  const page = browser.pages()[0] || await browser.newPage();
  const errors = [];

  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`file://${ pageFile }`);
  await page.waitForSelector('[data-field="imageName"] option[value="default/ubuntu"]', { state: 'attached', timeout: 15000 });
  const fields = await page.$$eval('[data-field]', (els) => els.map((e) => e.getAttribute('data-field')));

  if (fields.length < 40) {
    fail(`only ${ fields.length } fields rendered`);
  }
  if (await page.evaluate(() => window.hcivm.value.clusterName) !== 'mycluster') {
    fail('clusterName was not filled from the cluster');
  }
  await page.selectOption('[data-field="imageName"] select', 'default/ubuntu');
  await page.selectOption('[data-field="networkName"] select', 'default/vlan1');
  await page.fill('[data-field="diskSize"] input', '40');
  await page.fill('[data-field="cpuCount"] input', '');
  await page.type('[data-field="cpuCount"] input', '6');
  await page.check('[data-field="zone"] input[value="zone-b"]');
  const value = await page.evaluate(() => ({ ...window.hcivm.value, valid: window.hcivm.valid.slice(-1)[0] }));
  const want = { imageName: 'default/ubuntu', networkName: 'default/vlan1', diskSize: '40', cpuCount: '6', zone: 'zone-b', valid: true };

  for (const [k, v] of Object.entries(want)) {
    if (value[k] !== v) {
      fail(`${ k } is ${ JSON.stringify(value[k]) } after the change, want ${ JSON.stringify(v) }`);
    }
  }
  if (errors.length) {
    fail(`errors on the page: ${ errors.join('; ') }`);
  }
  if (process.env.SCREENSHOT) {
    await page.screenshot({ path: process.env.SCREENSHOT, clip: { x: 0, y: 0, width: 1200, height: 1400 }, fullPage: true });
  }
  console.log(`browser check${ built ? ` (built extension ${ built })` : '' }: ${ fields.length } fields rendered in ${ await browser.browser()?.version?.() || 'Chromium' }; typed and chosen values reached the machine config`);
} finally {
  await browser.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
