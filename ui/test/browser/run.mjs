// The browser check: the built extension (make ui-extension's build, ui/dist-pkg/hcivm-<version>: the UMD and
// stylesheet Rancher loads) on a page styled by @rancher/shell's own stylesheet and set up as Rancher's
// (out/host.js, bundle.mjs), in Debian's Chromium ($CHROMIUM, default /usr/bin/chromium) driven by
// playwright-core, which downloads no browser. The machine-config form must render its fields with Rancher's
// styles, and a value typed and one chosen must reach the machine config; the credential form must make a
// credential from an imported Harvester. SCREENSHOTS=dir writes ui-machine-config.png,
// ui-machine-config-dark.png and ui-cloud-credential.png there (SCREENSHOTS=../docs: the docs' pictures).
//
//   node test/browser/run.mjs --built ui/dist-pkg/hcivm-0.1.0
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const built = process.argv[2] === '--built' ? path.resolve(process.argv[3] || '') : '';

if (!fs.existsSync(executablePath)) {
  console.error(`browser check: no Chromium at ${ executablePath } (apt-get install -y chromium, or set CHROMIUM)`);
  process.exit(1);
}
const umd = built && fs.existsSync(built) ? fs.readdirSync(built).find((f) => /^hcivm-.*\.umd\.min\.js$/.test(f)) : '';

if (!umd) {
  console.error(`browser check: no hcivm-<version>.umd.min.js in ${ built || '(give --built DIR)' }`);
  process.exit(1);
}
const name = umd.replace(/\.umd\.min\.js$/, '');
const url = (f) => pathToFileURL(f).href;
const css = fs.readdirSync(built).filter((f) => f.endsWith('.css')).map((f) => `<link rel="stylesheet" href="${ url(path.join(built, f)) }">`);

function page(form, theme) {
  const file = path.join(here, 'out', `${ form }-${ theme }.html`);

  // The body's classes are the ones Rancher sets (@rancher/shell mixins/brand.js setBodyClass).
  fs.writeFileSync(file, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>hcivm ${ form }</title>
<link rel="stylesheet" href="${ url(path.join(here, 'out/shell.css')) }">
<link rel="stylesheet" href="${ url(path.join(here, 'out/host.css')) }">
${ css.join('\n') }
<style>#app { padding: 20px 30px; max-width: 1240px; }</style>
</head>
<body class="theme-${ theme } dashboard-body">
<div id="app"></div>
<script src="${ url(path.join(here, 'out/host.js')) }"></script>
<script src="${ url(path.join(built, umd)) }"></script>
<script>window.hcivmStart(window[${ JSON.stringify(name) }], ${ JSON.stringify(form) });</script>
</body></html>`);

  return url(file);
}

const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'hcivm-chromium-'));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  args:     ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--allow-file-access-from-files'],
  viewport: { width: 1280, height: 900 },
});
const fail = (msg) => {
  throw new Error(`browser check: ${ msg }`);
};
const shots = process.env.SCREENSHOTS ? path.resolve(process.env.SCREENSHOTS) : '';

async function open(form, theme) {
  const p = await browser.newPage();
  const errors = [];

  p.on('pageerror', (e) => errors.push(String(e)));
  await p.goto(page(form, theme));

  return { p, errors };
}

async function chooseOption(p, scope, text) {
  await p.click(`${ scope } .vs__dropdown-toggle`);
  await p.click(`.vs__dropdown-option:has-text(${ JSON.stringify(text) })`);
}

try {
  // The machine-config form, light theme: fields rendered with Rancher's styles, a typed and a chosen value kept.
  const { p, errors } = await open('machine-config', 'light');

  await p.waitForSelector('[data-disk="0"] [data-col="imageName"]', { timeout: 30000 });
  await p.waitForSelector('.advanced [data-field="userData"]', { timeout: 30000 });
  const fields = await p.$$eval('[data-field]', (els) => els.length);

  if (fields < 30) {
    fail(`only ${ fields } fields rendered`);
  }
  const styled = await p.evaluate(() => ({
    primary: getComputedStyle(document.body).getPropertyValue('--primary').trim(),
    input:   getComputedStyle(document.querySelector('[data-field="cpuCount"] .labeled-input')).borderStyle,
  }));

  if (!styled.primary || styled.input === 'none') {
    fail(`Rancher's styles are not applied: --primary ${ JSON.stringify(styled.primary) }, labeled input border ${ styled.input }`);
  }
  await p.fill('[data-field="cpuCount"] input', '6');
  await chooseOption(p, '[data-disk="0"] [data-col="imageName"]', 'ubuntu-24.04');
  await chooseOption(p, '[data-nic="0"] [data-col="networkName"]', 'default/vlan1');
  await p.fill('[data-field="sshUser"] input', 'ubuntu');
  const got = await p.evaluate(() => ({ ...window.hcivm.value, valid: window.hcivm.valid.slice(-1)[0], cloudProvider: window.hcivm.cluster.spec.rkeConfig.machineSelectorConfig[0].config['cloud-provider-name'] }));
  const want = {
    cpuCount: '6', clusterName: 'mycluster', diskInfo: '{"disks":[{"imageName":"default/noble","size":40,"bootOrder":1}]}',
    networkInfo: '{"interfaces":[{"networkName":"default/vlan1"}]}', sshUser: 'ubuntu', valid: true, cloudProvider: 'harvester',
  };

  for (const [k, v] of Object.entries(want)) {
    if (got[k] !== v) {
      fail(`${ k } is ${ JSON.stringify(got[k]) } after the changes, want ${ JSON.stringify(v) }`);
    }
  }
  if (errors.length) {
    fail(`errors on the page: ${ errors.join('; ') }`);
  }
  if (shots) {
    fs.mkdirSync(shots, { recursive: true });
    await p.waitForTimeout(500);
    await p.screenshot({ path: path.join(shots, 'ui-machine-config.png'), fullPage: true });
    await p.evaluate(() => {
      document.body.className = 'theme-dark dashboard-body';
    });
    await p.waitForTimeout(300);
    await p.screenshot({ path: path.join(shots, 'ui-machine-config-dark.png'), fullPage: true });
  }

  // The credential form: an imported Harvester chosen, its address read, a namespace chosen; saving makes the
  // driver's account in Harvester and the kubeconfig of its token, the cluster's id where Rancher reads it.
  const cred = await open('cloud-credential', 'light');

  await cred.p.waitForSelector('[data-field="clusterId"]', { timeout: 30000 });
  await chooseOption(cred.p, '[data-field="clusterId"]', 'harvester-prod');
  await cred.p.waitForFunction(() => document.querySelector('[data-field="server"] input')?.value === 'https://10.0.0.5:6443', null, { timeout: 10000 });
  await chooseOption(cred.p, '[data-field="namespaces"]', 'default');
  await cred.p.click('[data-option="keyPairName"] .checkbox-container');
  const tested = await cred.p.evaluate(() => window.hcivm.form.test());

  if (tested !== true) {
    fail(`the credential form's test() answered ${ JSON.stringify(tested) }`);
  }
  const config = await cred.p.evaluate(() => ({ ...window.hcivm.value.hcivmcredentialConfig, valid: window.hcivm.valid.slice(-1)[0] }));

  if (config.clusterId !== 'c-m-abc12' || config.clusterType !== 'imported' || !/token: /.test(config.kubeconfigContent || '') || !config.valid) {
    fail(`the credential holds ${ JSON.stringify({ ...config, kubeconfigContent: config.kubeconfigContent ? '(set)' : '' }) }`);
  }
  if (cred.errors.length) {
    fail(`errors on the credential page: ${ cred.errors.join('; ') }`);
  }
  if (shots) {
    await cred.p.screenshot({ path: path.join(shots, 'ui-cloud-credential.png'), fullPage: true });
  }
  console.log(`browser check (built extension ${ built }): ${ fields } fields rendered with Rancher's styles in Chromium ${ browser.browser()?.version?.() || '' }; typed and chosen values reached the machine config; the credential form made the driver's account in Harvester and its kubeconfig`);
} finally {
  await browser.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
