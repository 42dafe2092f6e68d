import { Command } from 'commander';
import { PayoutSettlementService } from '../../payouts/payout-settlement.service';
import { CliError, dataSourceOf, json, requireClient, RunCommand } from './command';

/** An operator's resolution of a pending or jammed payout. */
export function addPayoutCommands(program: Command, run: RunCommand): void {
  program
    .command('payout:resolve')
    .description("settle (SUCCESSFUL) or return to the float (FAILED) a pending or jammed payout's hold, and send its callback")
    .requiredOption('--client <code>', 'client code')
    .requiredOption('--reference <reference>', 'payout_reference of a local payout, IMT or B2B payout')
    .requiredOption('--status <status>', 'SUCCESSFUL or FAILED')
    .action((opts, cmd) =>
      run(async (app) => {
        if (opts.status !== 'SUCCESSFUL' && opts.status !== 'FAILED') throw new CliError('--status must be SUCCESSFUL or FAILED');
        const client = await requireClient(app, opts.client);
        const payout = await app.get(PayoutSettlementService).resolveByOperator(client.id, opts.reference, opts.status);
        const [hold] = await dataSourceOf(app).query(`SELECT status, outcome_entry_id FROM float_holds WHERE id = $1`, [payout.hold_id]);
        return {
          client_code: client.code,
          payout_reference: payout.payout_reference,
          payment_status: payout.status,
          result_description: payout.result_description,
          hold_status: hold.status,
          entry_id: String(hold.outcome_entry_id),
        };
      }, json(cmd)),
    );
}
