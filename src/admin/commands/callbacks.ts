import { Command } from 'commander';
import { CALLBACK_KINDS, CallbackSettingsService, isCallbackKind } from '../../clients/callback-settings.service';
import { CliError, json, requireClient, requireText, RunCommand } from './command';

/** A client's callback endpoints. */
export function addCallbackCommands(program: Command, run: RunCommand): void {
  program
    .command('callback:set')
    .description("set a client's callback URL for one kind of event and the Basic-auth credentials we present to it")
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--url <url>', 'callback URL (HTTPS; http:// to loopback hosts and host.docker.internal in sandbox)')
    .requiredOption('--username <username>', 'Basic-auth username')
    .requiredOption('--password <password>', 'Basic-auth password')
    .option('--kind <kind>', `which callbacks go to this URL: ${CALLBACK_KINDS.join(', ')}`, 'collections')
    .action((opts, cmd) =>
      run(async (app) => {
        if (!isCallbackKind(opts.kind)) throw new CliError(`--kind must be one of ${CALLBACK_KINDS.join(', ')}`);
        const client = await requireClient(app, opts.client);
        requireText('username', opts.username, 100);
        await app
          .get(CallbackSettingsService)
          .setEndpoint(client.id, opts.kind, { url: opts.url, username: opts.username, password: opts.password });
        return { client_code: client.code, callback_url: opts.url, callback_username: opts.username };
      }, json(cmd)),
    );
}
