'use strict';
// Compiles the TypeScript sources when dist/ is missing or older than any source file, so `npm run admin`,
// `npm run migration:run` and `npm run sandbox` work straight after `npm ci`. In the production image there are
// no sources (only dist/), and nothing is compiled.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const STAMP = path.join(ROOT, 'dist', '.build-stamp');
/** Written by every compilation, also by `npm run build` (tsc -p tsconfig.build.json, as the Dockerfile builds). */
const BUILD_INFO = path.join(ROOT, 'dist', '.tsbuildinfo');

function newestMtime(dir) {
  if (!fs.existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else if (entry.name.endsWith('.ts') || entry.name.endsWith('.sql')) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

function ensureBuilt() {
  // A runtime image (or any checkout without sources) ships dist/ only: use it as it is.
  if (!fs.existsSync(path.join(ROOT, 'src')) && fs.existsSync(path.join(ROOT, 'dist', 'src'))) return;
  const sources = Math.max(newestMtime(path.join(ROOT, 'src')), newestMtime(path.join(ROOT, 'migrations')));
  const built = Math.max(...[STAMP, BUILD_INFO].map((file) => (fs.existsSync(file) ? fs.statSync(file).mtimeMs : 0)));
  if (built >= sources) return;
  build([]);
  fs.writeFileSync(STAMP, new Date().toISOString());
}

/** The `.sql` files of every `sql/` folder under `from`, relative to it. */
function functionSourceFiles(from) {
  if (!fs.existsSync(from)) return [];
  return fs
    .readdirSync(from, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.sql') && path.basename(entry.parentPath) === 'sql')
    .map((entry) => path.relative(from, path.join(entry.parentPath, entry.name)));
}

/**
 * The database function sources (src/<domain>/sql/*.sql) go to the same place under dist/src, where the migrate step
 * reads them; a source deleted from src/ is deleted from dist/ too, so it is never applied again.
 */
function copyFunctionSources(outDir = path.join(ROOT, 'dist')) {
  const from = path.join(ROOT, 'src');
  const to = path.join(outDir, 'src');
  for (const file of functionSourceFiles(to)) fs.rmSync(path.join(to, file));
  for (const file of functionSourceFiles(from)) {
    fs.mkdirSync(path.dirname(path.join(to, file)), { recursive: true });
    fs.copyFileSync(path.join(from, file), path.join(to, file));
  }
}

/** True when every package named in package.json is present in node_modules. */
function dependenciesInstalled() {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const names = Object.keys({ ...(pkg.dependencies ?? {}), ...(pkg.devDependencies ?? {}) });
  return names.every((name) => fs.existsSync(path.join(ROOT, 'node_modules', name, 'package.json')));
}

/** Runs `npm ci` when node_modules is missing or lacks a declared package (a fresh clone, a new dependency). */
function ensureInstalled() {
  if (dependenciesInstalled()) return;
  process.stdout.write('Installing dependencies (npm ci)...\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { stdio: 'inherit', cwd: ROOT });
  if (result.status !== 0) {
    throw new Error(`npm ci failed (exit code ${result.status ?? result.signal}); run it yourself to see why`);
  }
}

module.exports = { ensureBuilt, ensureInstalled, copyFunctionSources, ROOT };

/**
 * `npm run build [-- tsc options]`: tsc with tsconfig.build.json (and the options given, such as --outDir), then the
 * function sources into the same output directory.
 */
function build(tscOptions) {
  const tsc = require.resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), ...tscOptions], { stdio: 'inherit', cwd: ROOT });
  const outDir = tscOptions.indexOf('--outDir');
  copyFunctionSources(outDir >= 0 ? path.resolve(ROOT, tscOptions[outDir + 1]) : undefined);
}

if (require.main === module) {
  try {
    build(process.argv.slice(2));
  } catch (error) {
    process.exit(error.status ?? 1);
  }
}
