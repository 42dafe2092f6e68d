import { Command } from 'commander';
import { RailRequestsRepository } from '../../rails/rail-requests.repository';
import { json, RunCommand } from './command';

/** Requests at the operators (rails). */
export function addRailCommands(program: Command, run: RunCommand): void {
  program
    .command('rails:status')
    .description("requests at the operators without a final answer, per rail, operation and state: how many, and the oldest one's age")
    .action((_opts, cmd) =>
      run(async (app) => {
        const rows = await app.get(RailRequestsRepository).inFlight();
        return { in_flight: rows.length ? rows : 'nothing in flight' };
      }, json(cmd)),
    );
}
