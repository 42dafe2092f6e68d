import { Command } from 'commander';
import { distribute, DistributionRefused, NotCitus } from '../../infra/database/distribute';
import { CliError, json, RunCommand, withConnection } from './command';

/** The database itself, past one primary. */
export function addDatabaseCommands(program: Command, run: RunCommand): void {
  program
    .command('db:distribute')
    .description(
      'on a Citus coordinator: reference tables to every node, the rest distributed by client_id, functions delegated (docs/scaling.md); one transaction, idempotent',
    )
    .action((_opts, cmd) =>
      run(async (app) => {
        try {
          return { ...(await withConnection(app, (db) => distribute(db))) };
        } catch (error) {
          throw error instanceof NotCitus || error instanceof DistributionRefused ? new CliError(error.message) : error;
        }
      }, json(cmd)),
    );
}
