'use strict';
// Loads (require) every native module (*.node) under the node_modules folder given, as the running Node would: a
// prebuilt binary another runtime is meant to pick (node-gyp-build's naming: prebuilds/<platform>-<arch>/, a
// glibc/musl tag, an abi<N> tag) is left out and named; any other that fails to load fails the check.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(process.argv[2] || 'node_modules');
const libc = process.report.getReport().header.glibcVersionRuntime ? 'glibc' : 'musl';

/** Why this file is for another runtime, or null when this one should load it. */
function otherRuntime(file) {
  const dir = path.basename(path.dirname(file));
  if (path.basename(path.dirname(path.dirname(file))) === 'prebuilds' && !dir.startsWith(`${process.platform}-${process.arch}`)) {
    return `built for ${dir}`;
  }
  const tags = path.basename(file).split('.').slice(1, -1);
  const other = tags.find((tag) => (tag === 'glibc' || tag === 'musl') && tag !== libc);
  if (other) return `built for ${other}`;
  const abi = tags.find((tag) => /^abi\d+$/.test(tag));
  if (abi && abi !== `abi${process.versions.modules}`) return `built for Node ABI ${abi.slice(3)}`;
  return null;
}

const files = fs
  .readdirSync(root, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.node'))
  .map((entry) => path.join(entry.parentPath, entry.name))
  .sort();
let failed = 0;
let loaded = 0;
for (const file of files) {
  const name = path.relative(root, file);
  const reason = otherRuntime(file);
  if (reason) {
    console.log(`  skipped ${name} (${reason})`);
    continue;
  }
  try {
    require(file);
    loaded += 1;
    console.log(`  loaded  ${name}`);
  } catch (error) {
    failed += 1;
    console.error(`  FAILED  ${name}: ${error.message}`);
  }
}
console.log(`Node ${process.version} (${process.platform}-${process.arch}, ${libc}): ${loaded} native modules loaded, ${failed} failed`);
if (failed > 0) process.exit(1);
