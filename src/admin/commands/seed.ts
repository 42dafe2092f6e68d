import { Command } from 'commander';
import { SeedService } from '../seed.service';
import { CliError, json, RunCommand } from './command';

/** A demo merchant. */
export function addSeedCommand(program: Command, run: RunCommand): void {
  program
    .command('seed')
    .description('create or reuse a demo merchant with credentials, service and funded wallets; idempotent')
    .option('--client-code <code>', 'client code', 'DEMO')
    .option('--callback-url <url>', 'merchant callback URL')
    .option('--callback-username <username>', 'Basic-auth username we send to the merchant')
    .option('--callback-password <password>', 'Basic-auth password we send to the merchant')
    .action((opts, cmd) =>
      run(async (app) => {
        const callbackFlags = [opts.callbackUrl, opts.callbackUsername, opts.callbackPassword].filter((v) => v !== undefined).length;
        if (callbackFlags !== 0 && callbackFlags !== 3) {
          throw new CliError('--callback-url, --callback-username and --callback-password go together');
        }
        const callback =
          callbackFlags === 3 ? { url: opts.callbackUrl, username: opts.callbackUsername, password: opts.callbackPassword } : undefined;
        return app.get(SeedService).seed({ clientCode: opts.clientCode, callback });
      }, json(cmd)),
    );
}
