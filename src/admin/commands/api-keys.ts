import { Command } from 'commander';
import { ApiKeysService } from '../../auth/gateway/api-keys.service';
import { CliError, json, requireClient, RunCommand } from './command';

/** A client's gateway API keys. */
export function addApiKeyCommands(program: Command, run: RunCommand): void {
  program
    .command('api-key:create')
    .description('issue a gateway API key for a client; prints the consumer secret once')
    .requiredOption('--client <code>', 'client code')
    .action((opts, cmd) =>
      run(async (app) => {
        const client = await requireClient(app, opts.client);
        return { client_code: client.code, ...(await app.get(ApiKeysService).issue(client.id)) };
      }, json(cmd)),
    );

  program
    .command('api-key:list')
    .description("list a client's API keys (no secrets), newest first")
    .requiredOption('--client <code>', 'client code')
    .action((opts, cmd) =>
      run(async (app) => {
        const client = await requireClient(app, opts.client);
        return { client_code: client.code, api_keys: await app.get(ApiKeysService).list(client.id) };
      }, json(cmd)),
    );

  program
    .command('api-key:revoke')
    .description('revoke an API key: it and every token issued for it are refused from now on')
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--key <consumer_key>', 'the consumer key to revoke')
    .action((opts, cmd) =>
      run(async (app) => {
        const client = await requireClient(app, opts.client);
        const revoked = await app.get(ApiKeysService).revoke(client.id, opts.key);
        if (!revoked) throw new CliError(`API key ${opts.key} not found for client ${client.code}`);
        return { client_code: client.code, consumer_key: revoked.consumer_key, revoked_at: revoked.revoked_at };
      }, json(cmd)),
    );
}
