import { Command } from 'commander';
import Decimal from 'decimal.js';
import { isCurrency } from '../../common/currencies';
import { Money } from '../../common/money';
import { FxService } from '../../fx/fx.service';
import { CliError, json, RunCommand } from './command';

/** Exchange rates. */
export function addFxCommands(program: Command, run: RunCommand): void {
  program
    .command('fx:set')
    .description('set the buying and selling price of one unit of a currency in a base currency')
    .requiredOption('--base <code>', 'base currency, e.g. KES')
    .requiredOption('--currency <code>', 'quoted currency, e.g. USD')
    .requiredOption('--buying <rate>', 'price at which we buy one unit')
    .requiredOption('--selling <rate>', 'price at which we sell one unit')
    .action((opts, cmd) =>
      run(async (app) => {
        for (const code of [opts.base, opts.currency]) if (!isCurrency(code)) throw new CliError(`${code} is not a supported currency`);
        const buying = requireRate('buying', opts.buying);
        const selling = requireRate('selling', opts.selling);
        await app.get(FxService).setRate(opts.base, opts.currency, buying, selling, 'admin');
        return { base_currency: opts.base, currency: opts.currency, buying: buying.toFixed(), selling: selling.toFixed() };
      }, json(cmd)),
    );
}

function requireRate(name: string, value: string): Decimal {
  if (!/^\d+(\.\d{1,8})?$/.test(value) || new Money(value).lte(0))
    throw new CliError(`--${name} must be a positive rate with at most 8 decimals`);
  return new Money(value);
}
