import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { GatewayError } from '../common/errors/gateway-error';
import { amountProblem, formatAmount, Money } from '../common/money';
import { SplitShare } from '../collections/payment';

const MAX_SPLITS = 50;

/** A split settlement as the merchant asked for it: the partner wallet's account number and its exact share. */
export type SplitRequest = Pick<SplitShare, 'account' | 'amount' | 'reason'>;

/** Why split_settlements_check (src/split-settlements/sql/split_settlements_check.sql) refuses a collection's splits. */
export type SplitRefusal =
  | { problem: 'SPLIT_MANDATORY'; accounts: string[] }
  | { problem: 'SPLIT_PARTNER_UNKNOWN'; account: string }
  | { problem: 'SPLIT_PARTNER_INACTIVE'; account: string }
  | { problem: 'SPLIT_PARTNER_CURRENCY'; account: string; currency: string }
  | { problem: 'SPLIT_TOTAL'; total: string; amount: string };

/**
 * Split settlements (collection document §2, provider contract §5): shares of a payment for partner wallets of
 * the same client, checked when the payment is accepted and paid out of the settlement wallet in one entry when
 * the merchant confirms the payment.
 */
@Injectable()
export class SplitSettlementsService {
  /**
   * Reads `extra_data.split_settlements` as the merchant sent it: null when absent, otherwise the items (each
   * account once, amounts positive), or the error for a malformed list. The database checks the rest at
   * acceptance (SQL function split_settlements_check): partner wallets exist, are active and in the payment's
   * currency, their sum is at most the amount, and the service's mandatory partners are all present.
   */
  read(extraData: Record<string, unknown> | undefined): { items: SplitRequest[] | null; error: GatewayError | null } {
    const raw = extraData?.split_settlements;
    if (raw === undefined || raw === null) return { items: null, error: null };
    try {
      if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_SPLITS) {
        throw GatewayError.validation(`split_settlements must be an array of 1 to ${MAX_SPLITS} items`);
      }
      const items = raw.map((item, index) => parseItem(item, index));
      if (new Set(items.map((i) => i.account)).size !== items.length) {
        throw GatewayError.validation('split_settlements names a partner account more than once');
      }
      return { items: items.map((i) => ({ ...i, amount: i.amount.toFixed() })), error: null };
    } catch (error) {
      if (error instanceof GatewayError) return { items: null, error };
      throw error;
    }
  }

  /** The documented error for a refusal of split_settlements_check. */
  refusalError(refusal: SplitRefusal): GatewayError {
    switch (refusal.problem) {
      case 'SPLIT_MANDATORY':
        return missingPartners(refusal.accounts);
      case 'SPLIT_PARTNER_UNKNOWN':
        return GatewayError.validation(`split_settlements partner account ${refusal.account} does not exist`);
      case 'SPLIT_PARTNER_INACTIVE':
        return GatewayError.validation(`split_settlements partner account ${refusal.account} is not active`);
      case 'SPLIT_PARTNER_CURRENCY':
        return GatewayError.validation(`split_settlements partner account ${refusal.account} is not a ${refusal.currency} wallet`);
      case 'SPLIT_TOTAL':
        return GatewayError.validation(
          `split_settlements total ${formatAmount(refusal.total)} exceeds the amount ${formatAmount(refusal.amount)}`,
        );
      default:
        throw new Error(`unknown collection refusal ${(refusal as { problem: string }).problem}`);
    }
  }
}

function parseItem(item: unknown, index: number): { account: string; amount: Decimal; reason: string } {
  const where = `split_settlements[${index}]`;
  if (!item || typeof item !== 'object' || Array.isArray(item)) throw GatewayError.validation(`${where} must be an object`);
  const { account, amount, reason } = item as Record<string, unknown>;
  if (typeof account !== 'string' || !account || account.length > 32)
    throw GatewayError.validation(`${where}.account must be a wallet account number`);
  const problem = amountProblem(amount);
  if (problem) throw GatewayError.validation(`${where}.amount ${problem}`);
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > 255)) {
    throw GatewayError.validation(`${where}.reason must be a string of at most 255 characters`);
  }
  return { account, amount: new Money(amount as string), reason: (reason as string | undefined) ?? '' };
}

function missingPartners(accounts: string[]): GatewayError {
  return GatewayError.validation(`split_settlements must include the service's mandatory partner accounts: ${accounts.join(', ')}`);
}
