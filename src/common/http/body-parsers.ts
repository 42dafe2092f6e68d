import { errorCodes } from 'fastify';
import { parse as parseQueryString } from 'fast-querystring';
import { parse as parseLossless } from 'lossless-json';
import { TextDecoder } from 'node:util';
import secureJson from 'secure-json-parse';
import { Money } from '../money';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Fastify's own rules for the prototype-poisoning keys `__proto__` and `constructor.prototype`: refused. */
const POISONING = { protoAction: 'error', constructorAction: 'error' } as const;

/**
 * A number token that a double may not hold exactly: 16 or more digits (a double keeps 15 significant digits
 * exactly) or an exponent of three digits (overflow to Infinity, underflow to 0). Checked on the raw text so the
 * usual body (short amounts, ids) is parsed by JSON.parse alone.
 */
const MAYBE_INEXACT = /[\d.]{17}|\d{16}|\d[eE][+-]?\d{3}/;

/**
 * Parses a JSON request body (replacing Fastify's parser for application/json):
 * - bytes that are not UTF-8 are a 400, never text with U+FFFD in it;
 * - a number a double cannot hold exactly (1.0000000000000001, 12345678901234567.1234, 1e400) arrives as its JSON
 *   text, a numeric string: money rules then see every digit (provider contract §3 accepts numeric strings), and
 *   fields that take numbers refuse it rather than silently round it.
 * Empty bodies, invalid JSON and prototype-poisoning keys fail as with Fastify's parser.
 */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) throw new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY();
  const text = utf8Text(raw);
  let value: unknown;
  try {
    value = secureJson.parse(text, undefined, POISONING);
  } catch {
    throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
  }
  if (!MAYBE_INEXACT.test(text)) return value;
  try {
    // Keys repeat as JSON.parse takes them: the last one wins.
    return parseLossless(text, null, { parseNumber: exactNumber, onDuplicateKey: ({ newValue }) => newValue });
  } catch {
    // Only a nesting deeper than this parser's recursion gets here: JSON.parse read the same text above.
    throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
  }
}

/** The number when the double reads back as the same decimal; otherwise the number's JSON text. */
function exactNumber(text: string): number | string {
  const value = Number(text);
  try {
    return new Money(text).eq(new Money(value)) ? value : text;
  } catch {
    return text; // beyond decimal.js's exponent range
  }
}

/** A form body (the portal's forms) as Nest's own parser reads it, but refusing bytes that are not UTF-8. */
export function parseFormBody(raw: Buffer): Record<string, unknown> {
  return parseQueryString(utf8Text(raw));
}

function utf8Text(raw: Buffer): string {
  try {
    return utf8.decode(raw);
  } catch {
    throw Object.assign(new Error('Request body is not valid UTF-8'), { statusCode: 400 });
  }
}
