import 'reflect-metadata';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Command, CommanderError } from 'commander';
import { DataSource } from 'typeorm';
import { generatePassword, UsersService } from '../auth/users.service';
import { ClientsService } from '../clients/clients.service';
import { loadConfig } from '../infra/config/app-config';
import { verifyLedger } from '../ledger/ledger-invariants';
import { AdminModule } from './admin.module';
import { SeedService } from './seed.service';

/** A failure the operator can act on: printed as one line on stderr, exit code 1. */
class CliError extends Error {}

type Output = Record<string, unknown>;

/**
 * `npm run admin -- <command> [--json]`. With --json every command prints exactly one JSON object on stdout
 * (provider contract §8); without it, the same facts as readable lines.
 */
export function buildProgram(run: (action: (app: INestApplicationContext) => Promise<Output>, json: boolean) => Promise<void>): Command {
  const program = new Command('admin').description('Operator commands for the payments provider').exitOverride();
  const json = (cmd: Command) => Boolean(cmd.optsWithGlobals().json);
  program.option('--json', 'print one JSON object on stdout');

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

  program
    .command('user:create')
    .description('create a wallet-service user for a client; prints the password once')
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--username <username>', 'login name')
    .option('--password <password>', 'password (generated when omitted)')
    .action((opts, cmd) =>
      run(async (app) => {
        requireText('username', opts.username, 100);
        const client = await requireClient(app, opts.client);
        const password = opts.password ?? generatePassword();
        if (password.length < 8) throw new CliError('password must be at least 8 characters');
        const user = await app.get(UsersService).create(client.id, opts.username, password);
        return { user_id: user.id, client_code: client.code, username: user.username, password };
      }, json(cmd)),
    );

  program
    .command('ledger:verify')
    .description('check the ledger invariants (a)-(d); exits non-zero on any violation')
    .action((_opts, cmd) =>
      run(async (app) => {
        const results = await verifyLedger(app.get<DataSource>(getDataSourceToken()).manager);
        const ok = results.every((r) => r.violations.length === 0);
        const output = { ok, invariants: results.map((r) => ({ name: r.name, description: r.description, violations: r.violations.length, examples: r.violations.slice(0, 5) })) };
        if (!ok) throw Object.assign(new CliError('ledger invariants violated'), { output });
        return output;
      }, json(cmd)),
    );

  program
    .command('seed')
    .description('create or reuse a demo merchant with credentials, service and funded wallets; idempotent')
    .option('--client-code <code>', 'client code', 'DEMO')
    .option('--callback-url <url>', 'merchant callback URL')
    .option('--callback-username <username>', 'Basic-auth username we send to the merchant')
    .option('--callback-password <password>', 'Basic-auth password we send to the merchant')
    .action((opts, cmd) => run((app) => app.get(SeedService).seed({ clientCode: opts.clientCode }), json(cmd)));

  return program;
}

function requireText(name: string, value: string, max: number): void {
  if (!value.trim() || value.length > max) throw new CliError(`--${name} must be 1 to ${max} characters`);
}

async function requireClient(app: INestApplicationContext, code: string) {
  const client = await app.get(ClientsService).findByCode(code);
  if (!client) throw new CliError(`client ${code} not found`);
  return client;
}

async function main(argv: string[]): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(async (action, json) => {
    loadConfig();
    const app = await NestFactory.createApplicationContext(AdminModule, { logger: ['error'] });
    try {
      const output = await action(app);
      process.stdout.write(json ? `${JSON.stringify(output)}\n` : humanReadable(output));
    } catch (error) {
      const output = (error as { output?: Output }).output;
      if (output) process.stdout.write(json ? `${JSON.stringify(output)}\n` : humanReadable(output));
      process.stderr.write(`${oneLine(error)}\n`);
      exitCode = 1;
    } finally {
      await app.close();
    }
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 1;
    process.stderr.write(`${oneLine(error)}\n`);
    return 1;
  }
  return exitCode;
}

function humanReadable(output: Output): string {
  return Object.entries(output)
    .map(([key, value]) => `${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join('\n')
    .concat('\n');
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `error: ${message.replace(/\s+/g, ' ')}`;
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
