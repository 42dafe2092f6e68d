import { parse } from 'lossless-json';
import Decimal from 'decimal.js';

/**
 * An operator's JSON answer with every number kept as its text: amounts never pass through a double, and a field
 * read as text (`String(x)`) sees exactly what the operator wrote. Null when the text is not a JSON object or list.
 */
export function parseOperatorJson(text: string): Record<string, unknown> | null {
  try {
    // Keys repeat as JSON.parse takes them: the last one wins.
    const parsed = parse(text, null, { parseNumber: (number) => number, onDuplicateKey: ({ newValue }) => newValue });
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** An amount an operator wrote (a JSON number kept as text, or a string, maybe with thousands commas); null if none. */
export function operatorAmount(value: unknown): Decimal | null {
  if (value === null || value === undefined) return null;
  const text = String(value).replace(/,/g, '').trim();
  return /^-?\d+(\.\d+)?$/.test(text) ? new Decimal(text) : null;
}
