import { Command } from 'commander';
import { ensurePartitions, parseMonth } from '../../infra/database/partitions';
import { ArchiveRefused, archiveHistory } from '../history-archive';
import { CliError, json, RunCommand, withConnection } from './command';

/** The history tables' monthly partitions. */
export function addPartitionCommands(program: Command, run: RunCommand): void {
  program
    .command('partitions:ensure')
    .description("create the history tables' partitions of this month and the next 3, and of any month with rows in DEFAULT; idempotent")
    .action((_opts, cmd) =>
      run(async (app) => {
        const created = await withConnection(app, (db) => ensurePartitions(db));
        return { created: created.length ? created : 'nothing to create' };
      }, json(cmd)),
    );

  program
    .command('partitions:archive')
    .description(
      'detach the history months before the given one into schema archive, for export; refuses the current month and months with unresolved holds',
    )
    .requiredOption('--before <month>', 'YYYY-MM: every month before it is detached')
    .action((opts, cmd) =>
      run(async (app) => {
        const before = parseMonth(opts.before);
        if (!before) throw new CliError('--before must be a month, YYYY-MM');
        try {
          const detached = await withConnection(app, (db) => archiveHistory(db, before));
          return { detached: detached.length ? detached : 'nothing to detach' };
        } catch (error) {
          throw error instanceof ArchiveRefused ? new CliError(error.message) : error;
        }
      }, json(cmd)),
    );
}
