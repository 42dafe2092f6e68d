import { Command } from 'commander';
import { ChargeResolutionError, PaymentSettlementService } from '../../collections/payment-settlement.service';
import { CliError, json, requireClient, requireText, RunCommand } from './command';

/** A person's resolution of a jammed charge from the operator's evidence. */
export function addChargeCommands(program: Command, run: RunCommand): void {
  program
    .command('charge:resolve')
    .description("settle (SUCCESSFUL, with the operator's receipt) or fail a jammed charge (704), and send its callback")
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--id <charge>', 'charge_request_id of the jammed charge')
    .requiredOption('--status <status>', 'SUCCESSFUL or FAILED')
    .option('--receipt <receipt>', "the operator's receipt of the payment (with SUCCESSFUL)")
    .action((opts, cmd) =>
      run(async (app) => {
        if (opts.status !== 'SUCCESSFUL' && opts.status !== 'FAILED') throw new CliError('--status must be SUCCESSFUL or FAILED');
        if (!/^\d{1,18}$/.test(opts.id)) throw new CliError(`charge ${opts.id} not found for this client`);
        if (opts.receipt !== undefined) requireText('receipt', opts.receipt, 100);
        const client = await requireClient(app, opts.client);
        const payment = await app
          .get(PaymentSettlementService)
          .resolveByOperator(client.id, opts.id, opts.status, opts.receipt ?? null)
          .catch((error: Error) => {
            throw error instanceof ChargeResolutionError ? new CliError(error.message) : error;
          });
        return {
          client_code: client.code,
          charge_request_id: String(payment.id),
          payment_status: payment.payment_status,
          payer_transaction_id: payment.payer_transaction_id,
          entry_id: payment.entry_id === null ? null : String(payment.entry_id),
        };
      }, json(cmd)),
    );
}
