import { INestApplicationContext } from '@nestjs/common';
import { Command } from 'commander';
import { FloatAlertsService } from '../../float/float-alerts.service';
import { CliError, json, requireClient, RunCommand } from './command';

/** Low-balance alerts on a client's floats (the settlement wallet a service pays from). */
export function addFloatCommands(program: Command, run: RunCommand): void {
  program
    .command('float:alert')
    .description(
      "alert when the available balance of a service's float falls below a threshold: one float.low_balance callback per crossing",
    )
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--service <code>', 'client service whose float (settlement wallet) to watch')
    .requiredOption('--threshold <amount>', "positive amount, at most the currency's decimals")
    .option('--sms <msisdn>', 'also send an SMS to this number when the alert fires')
    .action((opts, cmd) =>
      run(async (app) => {
        const { client, alerts, accountNumber } = await floatOf(app, opts);
        const alert = await alerts.set(client.id, accountNumber, { threshold: opts.threshold, contact: opts.sms });
        return { client_code: client.code, service_code: opts.service, ...alert };
      }, json(cmd)),
    );

  program
    .command('float:alert-clear')
    .description("remove the low-balance alert of a service's float")
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--service <code>', 'client service whose float to stop watching')
    .action((opts, cmd) =>
      run(async (app) => {
        const { client, alerts, accountNumber } = await floatOf(app, opts);
        if (!(await alerts.clear(client.id, accountNumber))) throw new CliError(`float ${accountNumber} has no alert`);
        return { client_code: client.code, service_code: opts.service, account_number: accountNumber, cleared: true };
      }, json(cmd)),
    );
}

async function floatOf(app: INestApplicationContext, opts: { client: string; service: string }) {
  const client = await requireClient(app, opts.client);
  const alerts = app.get(FloatAlertsService);
  const accountNumber = await alerts.floatOfService(client.id, opts.service);
  if (!accountNumber) throw new CliError(`client ${client.code} has no service ${opts.service} with a float`);
  return { client, alerts, accountNumber };
}
