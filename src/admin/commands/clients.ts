import { Command } from 'commander';
import { ClientsService } from '../../clients/clients.service';
import { json, requireText, RunCommand } from './command';

/** Clients (merchants). */
export function addClientCommands(program: Command, run: RunCommand): void {
  program
    .command('client:create')
    .description('create a client (merchant)')
    .requiredOption('--code <code>', 'unique client code')
    .requiredOption('--name <name>', 'client name')
    .action((opts, cmd) =>
      run(async (app) => {
        requireText('code', opts.code, 32);
        requireText('name', opts.name, 100);
        const client = await app.get(ClientsService).create(opts.code, opts.name);
        return { client_id: client.id, client_code: client.code, client_name: client.name };
      }, json(cmd)),
    );
}
