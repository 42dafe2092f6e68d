'use strict';
// Turns the server's JSON log lines (pino, one object a line: what production ships to a log collector) into short
// readable lines for the sandbox terminal: one line per request (`12:04:05  POST /v1/auth 200 14 ms`), one line per
// message, the stack under an error. Nest's start-up chatter (one line per module and per route, about a hundred)
// and health probes are left out; anything that is not JSON is passed through as it is.
const readline = require('node:readline');

const LEVELS = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const STARTUP_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

function paint(useColour) {
  const code = (open) => (text) => (useColour ? `\x1b[${open}m${text}\x1b[0m` : text);
  return { dim: code(2), red: code(31), yellow: code(33), green: code(32), cyan: code(36) };
}

/** One readable line (or a few, for an error's stack) for a log record; null to leave it out. */
function formatRecord(record, colours) {
  const { dim, red, yellow, green, cyan } = colours;
  const level = Number(record.level) || 30;
  if (level < 40 && STARTUP_CONTEXTS.has(record.context)) return null;
  const time = dim(new Date(record.time ?? Date.now()).toISOString().slice(11, 19));
  if (record.req && record.res) {
    if (level < 40 && String(record.req.url ?? '').startsWith('/health')) return null;
    const status = Number(record.res.statusCode);
    const shown = status >= 500 ? red(status) : status >= 400 ? yellow(status) : green(status);
    const took = record.responseTime === undefined ? '' : ` ${dim(`${record.responseTime} ms`)}`;
    return `${time}  ${record.req.method} ${record.req.url} ${shown}${took}`;
  }
  const label = level >= 50 ? red(LEVELS[level] ?? 'ERROR') : level >= 40 ? yellow(LEVELS[level]) : cyan(LEVELS[level] ?? 'INFO');
  const context = record.context ? dim(`[${record.context}] `) : '';
  const stack = record.err?.stack ? `\n    ${String(record.err.stack).split('\n').join('\n    ')}` : '';
  return `${time}  ${label} ${context}${record.msg ?? ''}${stack}`;
}

/** Copies `input` (the server's stdout) to `output`, line by line, prettified. */
function prettyLogs(input, output, { colour = Boolean(output.isTTY) } = {}) {
  const colours = paint(colour);
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  lines.on('line', (line) => {
    let record = null;
    if (line.startsWith('{')) {
      try {
        record = JSON.parse(line);
      } catch {
        // not one of ours
      }
    }
    const text = record && typeof record === 'object' ? formatRecord(record, colours) : line;
    if (text !== null) output.write(`${text}\n`);
  });
}

module.exports = { prettyLogs };
