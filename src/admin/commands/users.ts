import { Command } from 'commander';
import { generatePassword, UsersService } from '../../auth/users.service';
import { CliError, json, requireClient, requireText, RunCommand } from './command';

/** A client's wallet-service users. */
export function addUserCommands(program: Command, run: RunCommand): void {
  program
    .command('user:create')
    .description("create a wallet-service user for a client, or with --password reset an existing user's password; prints it once")
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--username <username>', 'login name')
    .option('--password <password>', 'password (generated when omitted); given for an existing user of the client, resets it')
    .action((opts, cmd) =>
      run(async (app) => {
        requireText('username', opts.username, 100);
        const client = await requireClient(app, opts.client);
        const password = opts.password ?? generatePassword();
        if (password.length < 8) throw new CliError('password must be at least 8 characters');
        // A reset invalidates the user's wallet tokens; without --password an existing username is an error.
        const users = app.get(UsersService);
        const user =
          opts.password === undefined
            ? await users.create(client.id, opts.username, password)
            : await users.upsert(client.id, opts.username, password);
        return { user_id: user.id, client_code: client.code, username: user.username, password };
      }, json(cmd)),
    );
}
