import { Command } from 'commander';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { userInfo } from 'node:os';
import type { ReconciledRail } from '../../rails/operator-statement';
import { REPORT_FORMATS, type ReportFormat, writeReconReport } from '../../reconciliation/recon-report';
import { ReconciliationRepository, type ReconRow, type RunRow } from '../../reconciliation/reconciliation.repository';
import { RECONCILED_RAILS, ReconciliationError, ReconciliationService } from '../../reconciliation/reconciliation.service';
import { CliError, json, requireText, RunCommand } from './command';

const DAY_MS = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function railOf(value: string): ReconciledRail {
  if (!(RECONCILED_RAILS as readonly string[]).includes(value)) throw new CliError(`--rail must be one of ${RECONCILED_RAILS.join(', ')}`);
  return value as ReconciledRail;
}

function instantOf(name: string, value: string): Date {
  const at = new Date(DATE.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(at.getTime())) throw new CliError(`--${name} must be a date (YYYY-MM-DD) or an ISO 8601 instant`);
  return at;
}

/** --date: that UTC day; --from/--to: any period (to exclusive); neither: yesterday (UTC). */
function periodOf(opts: { date?: string; from?: string; to?: string }): { from: Date; to: Date } {
  if (opts.date && (opts.from || opts.to)) throw new CliError('give --date or --from/--to, not both');
  if (opts.from || opts.to) {
    if (!opts.from || !opts.to) throw new CliError('--from and --to go together');
    const period = { from: instantOf('from', opts.from), to: instantOf('to', opts.to) };
    if (period.to <= period.from) throw new CliError('--to must be after --from');
    return period;
  }
  if (opts.date && !DATE.test(opts.date)) throw new CliError('--date must be YYYY-MM-DD');
  const from = opts.date ? instantOf('date', opts.date) : new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS);
  return { from, to: new Date(from.getTime() + DAY_MS) };
}

const runOutput = (run: RunRow) => ({
  run_id: String(run.id),
  rail: run.rail,
  period_from: new Date(run.period_from).toISOString(),
  period_to: new Date(run.period_to).toISOString(),
  outcome: run.outcome,
  reason: run.reason,
  started_by: run.started_by,
  counts: run.counts,
  balance:
    run.operator_balance === null
      ? null
      : {
          currency: run.balance_currency,
          opening:
            run.opening_balance === null
              ? null
              : { amount: run.opening_balance, at: new Date(run.opening_at!).toISOString(), source: run.opening_source },
          movements: run.period_movements,
          expected: run.expected_balance,
          operator: run.operator_balance,
          difference: run.balance_difference,
          in_flight: run.in_flight,
          at: run.balance_at && new Date(run.balance_at).toISOString(),
        },
});

/** An amount in a statement's currency: up to four decimals, as the runs keep them; an overdrawn account below zero. */
const OPENING_AMOUNT = /^-?\d{1,16}(\.\d{1,4})?$/;

export const rowOutput = (row: ReconRow) => ({
  id: String(row.id),
  outcome: row.outcome,
  state: row.state,
  reference: row.reference,
  our_kind: row.our_kind,
  our_record_id: row.our_record_id,
  our_reference: row.our_reference,
  our_amount: row.our_amount,
  our_status: row.our_status,
  operator_reference: row.operator_reference,
  operator_amount: row.operator_amount,
  operator_status: row.operator_status,
  currency: row.currency,
  moved_at: row.moved_at && new Date(row.moved_at).toISOString(),
  settled_by: row.settled_by,
  resolved_by: row.resolved_by,
  resolution_note: row.resolution_note,
  resolution_entry_id: row.resolution_entry_id === null ? null : String(row.resolution_entry_id),
  evidence: row.evidence,
});

/** The run a person names, or the error saying there is none. */
async function runOf(runs: ReconciliationRepository, id: string): Promise<RunRow> {
  const found = /^\d{1,18}$/.test(id) ? await runs.run(id) : null;
  if (!found) throw new CliError(`reconciliation run ${id} not found`);
  return found;
}

/** A command's domain error as the one line a person acts on. */
async function plainly<T>(work: Promise<T>): Promise<T> {
  return work.catch((error: Error) => {
    throw error instanceof ReconciliationError ? new CliError(error.message) : error;
  });
}

/** Reconciliation against the operators (docs/rails.md, "Reconciliation runbook"). */
export function addReconciliationCommands(program: Command, run: RunCommand): void {
  program
    .command('recon:run')
    .description(
      "match a rail's operator statement for a period (default: yesterday, UTC) to what we hold; settle what our status queries can",
    )
    .requiredOption('--rail <rail>', RECONCILED_RAILS.join(', '))
    .option('--date <date>', 'a UTC day, YYYY-MM-DD')
    .option('--from <instant>', 'start of the period (inclusive)')
    .option('--to <instant>', 'end of the period (exclusive)')
    .option('--by <name>', 'who runs it (default: the system user)')
    .action((opts, cmd) =>
      run(async (app) => {
        const rail = railOf(opts.rail);
        const period = periodOf(opts);
        const done = await plainly(app.get(ReconciliationService).run(rail, period, opts.by ?? userInfo().username));
        const output = runOutput(done);
        if (done.outcome !== 'COMPLETE') throw Object.assign(new CliError(`run ${done.id} is incomplete: ${done.reason}`), { output });
        return output;
      }, json(cmd)),
    );

  program
    .command('recon:opening')
    .description("record the operator's balance of a rail's account at an instant: the next run's balance line rolls forward from it")
    .requiredOption('--rail <rail>', RECONCILED_RAILS.join(', '))
    .requiredOption('--amount <amount>', "the operator's balance (up to four decimals)")
    .requiredOption('--currency <code>', "the account's currency (ISO 4217)")
    .option('--at <instant>', 'when the operator reported it (default: now)')
    .option('--note <text>', "where the figure comes from (the operator's statement, a screenshot)")
    .option('--by <name>', 'who sets it (default: the system user)')
    .action((opts, cmd) =>
      run(async (app) => {
        const rail = railOf(opts.rail);
        if (!OPENING_AMOUNT.test(opts.amount)) throw new CliError('--amount must be a number with at most four decimals');
        if (!/^[A-Z]{3}$/.test(opts.currency)) throw new CliError('--currency must be a three-letter ISO 4217 code');
        const at = opts.at === undefined ? new Date() : instantOf('at', opts.at);
        if (at.getTime() > Date.now()) throw new CliError('--at must not be in the future');
        if (opts.note !== undefined) requireText('note', opts.note, 1000);
        const by = opts.by ?? userInfo().username;
        requireText('by', by, 200);
        const row = await app.get(ReconciliationRepository).setOpening(rail, opts.amount, opts.currency, at, by, opts.note ?? null);
        return {
          opening_id: String(row.id),
          rail: row.rail,
          amount: row.amount,
          currency: row.currency,
          at: new Date(row.at).toISOString(),
          set_by: row.set_by,
          note: row.note,
        };
      }, json(cmd)),
    );

  program
    .command('recon:list')
    .description('the latest reconciliation runs')
    .option('--rail <rail>', RECONCILED_RAILS.join(', '))
    .option('--limit <n>', 'how many (1 to 500)', '20')
    .action((opts, cmd) =>
      run(async (app) => {
        const limit = Number(opts.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new CliError('--limit must be a whole number from 1 to 500');
        const runs = await app.get(ReconciliationRepository).runs(opts.rail ? railOf(opts.rail) : null, limit);
        return { runs: runs.map(runOutput) };
      }, json(cmd)),
    );

  program
    .command('recon:show')
    .description('a run with its differences (--all: its matched rows too)')
    .requiredOption('--id <run>', 'run id')
    .option('--all', 'include the matched rows')
    .action((opts, cmd) =>
      run(async (app) => {
        const runs = app.get(ReconciliationRepository);
        const found = await runOf(runs, opts.id);
        return { ...runOutput(found), rows: (await runs.rowsOf(found.id, !opts.all)).map(rowOutput) };
      }, json(cmd)),
    );

  program
    .command('recon:report')
    .description("a run's differences as a file, one line per difference (rail, outcome, references, amounts, client, state, note)")
    .requiredOption('--id <run>', 'run id')
    .requiredOption('--format <format>', REPORT_FORMATS.join(' or '))
    .requiredOption('--out <file>', 'the file to write')
    .action((opts, cmd) =>
      run(async (app) => {
        if (!(REPORT_FORMATS as readonly string[]).includes(opts.format))
          throw new CliError(`--format must be ${REPORT_FORMATS.join(' or ')}`);
        const runs = app.get(ReconciliationRepository);
        const found = await runOf(runs, opts.id);
        const rows = await runs.rowsOf(found.id, true);
        const clients = await runs.clientCodes(rows.flatMap((row) => (row.client_id === null ? [] : [row.client_id])));
        const out = createWriteStream(opts.out);
        const opened = once(out, 'open').catch((error: Error) => {
          throw new CliError(`cannot write ${opts.out}: ${error.message}`);
        });
        await opened;
        await writeReconReport(opts.format as ReportFormat, found, rows, clients, out);
        return { run_id: String(found.id), format: opts.format, out: opts.out, lines: rows.length };
      }, json(cmd)),
    );

  program
    .command('recon:resolve')
    .description(
      "close an open difference with the person's reason; a movement pending at us is finished with --status through its own path (a ledger entry)",
    )
    .requiredOption('--id <row>', 'reconciliation row id (recon:show lists them)')
    .requiredOption('--note <text>', 'why, with the evidence (up to 1000 characters)')
    .option('--by <name>', 'who resolves it (default: the system user)')
    .option('--status <status>', "SUCCESSFUL or FAILED: the operator's evidence for a movement we hold as pending")
    .option('--receipt <receipt>', "the operator's receipt, with --status SUCCESSFUL for a jammed charge")
    .action((opts, cmd) =>
      run(async (app) => {
        requireText('note', opts.note, 1000);
        if (!/^\d{1,18}$/.test(opts.id)) throw new CliError(`reconciliation row ${opts.id} not found`);
        if (opts.status !== undefined && opts.status !== 'SUCCESSFUL' && opts.status !== 'FAILED') {
          throw new CliError('--status must be SUCCESSFUL or FAILED');
        }
        const by = opts.by ?? userInfo().username;
        requireText('by', by, 200);
        const row = await plainly(
          app.get(ReconciliationService).resolve(opts.id, by, opts.note, opts.status ?? null, opts.receipt ?? null),
        );
        return { ...rowOutput(row), moved_money: row.resolution_entry_id !== null };
      }, json(cmd)),
    );
}
