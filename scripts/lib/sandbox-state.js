'use strict';
// The running sandbox's addresses, so a second terminal reaches the same services: `npm run sandbox` writes
// .sandbox/state.json (git-ignored, readable by its owner only: the database URL may hold the embedded Postgres
// password) once the server answers, and removes it when it stops cleanly. A file whose pid is no longer alive
// (a sandbox killed hard) is ignored. `npm run admin` reads it; `npm test` does not (see README, "Set-up").
//
// PAYGATE_SANDBOX_STATE moves the file (tests use it so they never touch a developer's running sandbox).
const fs = require('node:fs');
const path = require('node:path');
const { ROOT } = require('./build');

function stateFile() {
  return process.env.PAYGATE_SANDBOX_STATE || path.join(ROOT, '.sandbox', 'state.json');
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * The state of a sandbox that is still running, or null.
 * @returns {{pid: number, baseUrl: string, databaseUrl: string, redisUrl: string, startedAt: string} | null}
 */
function readSandboxState() {
  let state;
  try {
    state = JSON.parse(fs.readFileSync(stateFile(), 'utf8'));
  } catch {
    return null; // none, or half-written by a sandbox being killed: as good as none
  }
  return Number.isInteger(state?.pid) && alive(state.pid) && typeof state.databaseUrl === 'string' ? state : null;
}

function writeSandboxState(state) {
  const file = stateFile();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify({ ...state, pid: process.pid }, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temporary, file); // readers never see half a file
}

/** Removes the file if it is ours (a second sandbox that refused to start must not remove the first one's). */
function removeSandboxState() {
  const file = stateFile();
  try {
    if (JSON.parse(fs.readFileSync(file, 'utf8')).pid === process.pid) fs.rmSync(file, { force: true });
  } catch {
    // nothing to remove
  }
}

module.exports = { readSandboxState, writeSandboxState, removeSandboxState, stateFile };
