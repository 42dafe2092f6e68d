'use strict';
// Compiles the TypeScript sources when dist/ is missing or older than any source file, so `npm run admin`,
// `npm run migration:run` and `npm run sandbox` work straight after `npm ci`.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const STAMP = path.join(ROOT, 'dist', '.build-stamp');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

function ensureBuilt() {
  const sources = Math.max(newestMtime(path.join(ROOT, 'src')), newestMtime(path.join(ROOT, 'migrations')));
  const built = fs.existsSync(STAMP) ? fs.statSync(STAMP).mtimeMs : 0;
  if (built >= sources) return;
  const tsc = require.resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit', cwd: ROOT });
  fs.writeFileSync(STAMP, new Date().toISOString());
}

module.exports = { ensureBuilt, ROOT };
