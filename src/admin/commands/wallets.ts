import { Command } from 'commander';
import Decimal from 'decimal.js';
import { amountProblem, Money } from '../../common/money';
import { MoneyMovementsService } from '../../transactions/money-movements.service';
import { CliError, dataSourceOf, json, RunCommand } from './command';

/** Money into wallets from outside. */
export function addWalletCommands(program: Command, run: RunCommand): void {
  program
    .command('wallet:fund')
    .description("credit a wallet from its client's settlement account (an EXTERNAL_CREDIT with no fee)")
    .requiredOption('--account <number>', 'wallet account number')
    .requiredOption('--amount <amount>', 'amount in the wallet currency')
    .action((opts, cmd) =>
      run(async (app) => {
        const amount = requireAmount('amount', opts.amount);
        const [wallet] = await dataSourceOf(app).query(
          `SELECT client_id FROM ledger_accounts WHERE account_number = $1 AND kind = 'WALLET'`,
          [opts.account],
        );
        if (!wallet) throw new CliError(`wallet ${opts.account} not found`);
        return app.get(MoneyMovementsService).fund(wallet.client_id, opts.account, amount);
      }, json(cmd)),
    );
}

function requireAmount(name: string, value: string): Decimal {
  const problem = amountProblem(value);
  if (problem) throw new CliError(`--${name} ${problem}`);
  return new Money(value);
}
