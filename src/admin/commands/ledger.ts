import { Command } from 'commander';
import { verifyLedger } from '../../ledger/ledger-invariants';
import { CliError, dataSourceOf, json, RunCommand } from './command';

/** The ledger's invariants. */
export function addLedgerCommands(program: Command, run: RunCommand): void {
  program
    .command('ledger:verify')
    .description('check the ledger invariants (a)-(e); exits non-zero on any violation')
    .action((_opts, cmd) =>
      run(async (app) => {
        const results = await verifyLedger(dataSourceOf(app).manager);
        const ok = results.every((r) => r.violations.length === 0);
        const output = {
          ok,
          invariants: results.map((r) => ({
            name: r.name,
            description: r.description,
            violations: r.violations.length,
            examples: r.violations.slice(0, 5),
          })),
        };
        if (!ok) throw Object.assign(new CliError('ledger invariants violated'), { output });
        return output;
      }, json(cmd)),
    );
}
