import Decimal from 'decimal.js';
import { Money } from '../common/money';
import { PostingLine } from './ledger.service';

/** Collects the postings of one entry, merging lines on the same account and dropping zero lines. */
export class EntryBuilder {
  private readonly amounts = new Map<string, Decimal>();

  /** Raises the account's balance by amount. */
  credit(accountId: string, amount: Decimal): this {
    return this.add(accountId, amount);
  }

  /** Lowers the account's balance by amount. */
  debit(accountId: string, amount: Decimal): this {
    return this.add(accountId, amount.negated());
  }

  lines(): PostingLine[] {
    return [...this.amounts].filter(([, amount]) => !amount.isZero()).map(([accountId, amount]) => ({ accountId, amount }));
  }

  private add(accountId: string, amount: Decimal): this {
    this.amounts.set(accountId, (this.amounts.get(accountId) ?? new Money(0)).plus(amount));
    return this;
  }
}
