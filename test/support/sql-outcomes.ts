import { readFunctionSources } from '../../src/infra/database/function-sources';

/** How a function source names the outcome it answers. */
const OUTCOME_WRITES = {
  /** `outcome := '…'`, `v_outcome[i] := '…'` or `jsonb_build_object('outcome', '…', …)`. */
  assigned: /\b(?:v_)?outcome(?:\[i\])?\s*:=\s*'([A-Z_]+)'|'outcome',\s*'([A-Z_]+)'/g,
  /**
   * A set-wise function that picks its outcome in CASE expressions: their results (`THEN '…'`, `ELSE '…'`). Its other
   * CASE expressions must give no text literal.
   */
  caseResults: /\b(?:THEN|ELSE)\s+'([A-Z_]+)'/g,
} as const;

/**
 * The outcomes the function source `file` (under src/, as `payouts/sql/payout_accept_batch.sql`) writes, sorted:
 * what a test holds to the type its TypeScript wrapper declares, so that an outcome added or renamed on one side only
 * fails without a database.
 */
export function outcomesWritten(file: string, style: keyof typeof OUTCOME_WRITES = 'assigned'): string[] {
  const source = readFunctionSources().find((s) => s.file === file);
  if (!source) throw new Error(`no function source ${file}`);
  const code = source.text.replace(/--.*$/gm, '');
  return [...new Set([...code.matchAll(OUTCOME_WRITES[style])].map((m) => m[1] ?? m[2]))].sort();
}
