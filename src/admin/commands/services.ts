import { Command } from 'commander';
import { DataSource } from 'typeorm';
import { ClientServicesService } from '../../client-services/client-services.service';
import { CliError, dataSourceOf, json, RunCommand } from './command';

/** Client services' settlement wallet and split-settlement partners. */
export function addServiceCommands(program: Command, run: RunCommand): void {
  program
    .command('service:settlement')
    .description('set the wallet a client service settles collections into and pays payouts from')
    .requiredOption('--service <code>', 'client service code')
    .requiredOption('--account <number>', 'wallet account number of the same client')
    .action((opts, cmd) =>
      run(async (app) => {
        const db = dataSourceOf(app);
        const { service, wallet } = await serviceAndWallet(db, opts.service, opts.account);
        await app.get(ClientServicesService).setSettlementWallet(db.manager, service.client_id, opts.service, wallet.id);
        return { service_code: opts.service, settlement_account_number: opts.account };
      }, json(cmd)),
    );

  program
    .command('service:partner-add')
    .description('make a wallet a mandatory split-settlement partner of a client service')
    .requiredOption('--service <code>', 'client service code')
    .requiredOption('--account <number>', 'partner wallet account number of the same client')
    .action((opts, cmd) =>
      run(async (app) => {
        const db = dataSourceOf(app);
        const { service, wallet } = await serviceAndWallet(db, opts.service, opts.account);
        await db.query(
          `INSERT INTO client_service_partners (client_id, client_service_id, account_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
          [service.client_id, service.id, wallet.id],
        );
        const partners = await db.query(
          `SELECT a.account_number FROM client_service_partners p JOIN ledger_accounts a ON a.client_id = p.client_id AND a.id = p.account_id
           WHERE p.client_id = $1 AND p.client_service_id = $2 ORDER BY a.account_number`,
          [service.client_id, service.id],
        );
        return {
          service_code: opts.service,
          mandatory_partner_accounts: partners.map((p: { account_number: string }) => p.account_number),
        };
      }, json(cmd)),
    );
}

/** The client service of `serviceCode` and the wallet of `accountNumber`, which must be of the service's client. */
async function serviceAndWallet(
  db: DataSource,
  serviceCode: string,
  accountNumber: string,
): Promise<{ service: { id: string; client_id: string }; wallet: { id: string } }> {
  const [service] = await db.query(`SELECT id, client_id FROM client_services WHERE code = $1`, [serviceCode]);
  if (!service) throw new CliError(`client service ${serviceCode} not found`);
  const [wallet] = await db.query(`SELECT id FROM ledger_accounts WHERE account_number = $1 AND client_id = $2 AND kind = 'WALLET'`, [
    accountNumber,
    service.client_id,
  ]);
  if (!wallet) throw new CliError(`wallet ${accountNumber} not found for the service's client`);
  return { service, wallet };
}
