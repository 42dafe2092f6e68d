import 'reflect-metadata';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Command, CommanderError } from 'commander';
import { loadConfig } from '../infra/config/app-config';
import { AdminModule } from './admin.module';
import { addClientCommands } from './commands/clients';
import { addUserCommands } from './commands/users';
import { addLedgerCommands } from './commands/ledger';
import { addWalletCommands } from './commands/wallets';
import { addFxCommands } from './commands/fx';
import { addServiceCommands } from './commands/services';
import { addApiKeyCommands } from './commands/api-keys';
import { addCallbackCommands } from './commands/callbacks';
import { addFloatCommands } from './commands/floats';
import { addPayoutCommands } from './commands/payouts';
import { addAirtimeCommands } from './commands/airtime';
import { addChargeCommands } from './commands/charges';
import { addRailCommands } from './commands/rails';
import { addReconciliationCommands } from './commands/reconciliation';
import { addPartitionCommands } from './commands/partitions';
import { addDatabaseCommands } from './commands/database';
import { addSeedCommand } from './commands/seed';
import { CliError, Output, RunCommand } from './commands/command';
import { databaseProblem } from './database-check';

/**
 * `npm run admin -- <command> [--json]`. With --json every command prints exactly one JSON object on stdout
 * (provider contract §8); without it, the same facts as readable lines. Each group of commands (the part of the name
 * before the colon) is added by its module in commands/.
 */
export function buildProgram(run: RunCommand): Command {
  const program = new Command('admin').description('Operator commands for the payments provider').exitOverride();
  program.option('--json', 'print one JSON object on stdout');
  // In the order --help lists them.
  const groups = [
    addClientCommands,
    addUserCommands,
    addLedgerCommands,
    addWalletCommands,
    addFxCommands,
    addServiceCommands,
    addApiKeyCommands,
    addCallbackCommands,
    addFloatCommands,
    addPayoutCommands,
    addAirtimeCommands,
    addChargeCommands,
    addRailCommands,
    addReconciliationCommands,
    addPartitionCommands,
    addDatabaseCommands,
    addSeedCommand,
  ];
  for (const addCommands of groups) addCommands(program, run);
  return program;
}

async function main(argv: string[]): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(async (action, json) => {
    let app: INestApplicationContext;
    try {
      const problem = await databaseProblem(loadConfig().databaseUrl);
      if (problem) throw new CliError(problem);
      app = await NestFactory.createApplicationContext(AdminModule, { logger: false, abortOnError: false });
    } catch (error) {
      process.stderr.write(`${oneLine(error)}\n`);
      exitCode = 1;
      return;
    }
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
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
