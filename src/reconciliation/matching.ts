import type { OperatorMovement, OurMovement } from '../rails/operator-statement';

export const RECON_OUTCOMES = [
  'MATCHED',
  'MISSING_AT_US',
  'MISSING_AT_OPERATOR',
  'AMOUNT_MISMATCH',
  'STATUS_MISMATCH',
  'DUPLICATE_AT_OPERATOR',
] as const;
export type ReconOutcome = (typeof RECON_OUTCOMES)[number];

/** One line of a run: an operator row, a movement of ours, or the two matched. */
export interface MatchedRow {
  outcome: ReconOutcome;
  /** The key a rerun finds the row by: our record when there is one, the operator's reference otherwise. */
  reference: string;
  ours: OurMovement | null;
  theirs: OperatorMovement | null;
  /** How the pair was found: by the operator's reference, ours, or amount, counterparty and time. */
  matchedBy: 'OPERATOR_REFERENCE' | 'OUR_REFERENCE' | 'AMOUNT_AND_TIME' | null;
}

export interface MatchOptions {
  /** The period of the run: a movement of ours outside it only serves to match an operator row near its edge. */
  from: Date;
  to: Date;
  /** How far apart in time an operator row and a movement of ours may be to match by amount and counterparty. */
  windowMs: number;
}

export const ourKey = (movement: OurMovement) => `${movement.kind}:${movement.recordId}`;
const digits = (value: string | null) => (value ?? '').replace(/\D/g, '');
/** Numbers written 2547… and 07… are the same subscriber: compared on their last nine digits. */
const sameCounterparty = (a: string | null, b: string | null) => {
  const x = digits(a);
  const y = digits(b);
  return x.length > 0 && y.length > 0 && x.slice(-9) === y.slice(-9);
};

/**
 * Matches the operator's rows to our movements one to one: by the operator's reference, then by our reference, then by
 * amount, direction and counterparty within the time window (the nearest in time). An operator row whose reference
 * or ours names a movement another row already took is the operator moving it twice. What stays unpaired is missing
 * on the other side; an unpaired row or movement that moved no money (failed at both) is not a difference.
 */
export function matchMovements(ours: readonly OurMovement[], theirs: readonly OperatorMovement[], options: MatchOptions): MatchedRow[] {
  const rows: MatchedRow[] = [];
  const taken = new Set<OurMovement>();
  const seenReferences = new Map<string, number>();
  const byOperatorReference = new Map(ours.filter((m) => m.operatorReference).map((m) => [m.operatorReference!, m]));
  const byOurReference = new Map(ours.map((m) => [m.ourReference, m]));

  const sorted = [...theirs].sort((a, b) => a.at.getTime() - b.at.getTime() || a.operatorReference.localeCompare(b.operatorReference));
  for (const row of sorted) {
    const seen = (seenReferences.get(row.operatorReference) ?? 0) + 1;
    seenReferences.set(row.operatorReference, seen);
    if (seen > 1) {
      // The same transaction listed again (the operator's page repeated it): the listing, not money, is doubled.
      rows.push({
        outcome: 'DUPLICATE_AT_OPERATOR',
        reference: `operator:${row.operatorReference}#${seen}`,
        ours: null,
        theirs: row,
        matchedBy: null,
      });
      continue;
    }
    const named = byOperatorReference.get(row.operatorReference);
    const referenced = row.ourReference ? byOurReference.get(row.ourReference) : undefined;
    const pick = named ?? referenced;
    if (pick && taken.has(pick)) {
      rows.push({
        outcome: 'DUPLICATE_AT_OPERATOR',
        reference: `operator:${row.operatorReference}`,
        ours: pick,
        theirs: row,
        matchedBy: named ? 'OPERATOR_REFERENCE' : 'OUR_REFERENCE',
      });
      continue;
    }
    const found = pick ?? nearest(ours, taken, row, options.windowMs);
    if (!found) {
      if (row.status !== 'FAILED') {
        rows.push({ outcome: 'MISSING_AT_US', reference: `operator:${row.operatorReference}`, ours: null, theirs: row, matchedBy: null });
      }
      continue;
    }
    taken.add(found);
    rows.push({
      outcome: !found.amount.equals(row.amount) ? 'AMOUNT_MISMATCH' : found.status !== row.status ? 'STATUS_MISMATCH' : 'MATCHED',
      reference: ourKey(found),
      ours: found,
      theirs: row,
      matchedBy: named ? 'OPERATOR_REFERENCE' : referenced ? 'OUR_REFERENCE' : 'AMOUNT_AND_TIME',
    });
  }
  for (const movement of ours) {
    if (taken.has(movement) || movement.status === 'FAILED') continue;
    if (movement.at < options.from || movement.at >= options.to) continue;
    rows.push({ outcome: 'MISSING_AT_OPERATOR', reference: ourKey(movement), ours: movement, theirs: null, matchedBy: null });
  }
  return rows;
}

/** The movement of ours not yet taken with the row's amount, direction and counterparty, nearest in time within the window. */
function nearest(ours: readonly OurMovement[], taken: Set<OurMovement>, row: OperatorMovement, windowMs: number): OurMovement | undefined {
  let best: OurMovement | undefined;
  let bestGap = Infinity;
  for (const movement of ours) {
    if (taken.has(movement) || movement.direction !== row.direction || !movement.amount.equals(row.amount)) continue;
    if (movement.currency !== row.currency || !sameCounterparty(movement.counterparty, row.counterparty)) continue;
    const gap = Math.abs(movement.at.getTime() - row.at.getTime());
    if (gap <= windowMs && gap < bestGap) {
      best = movement;
      bestGap = gap;
    }
  }
  return best;
}
