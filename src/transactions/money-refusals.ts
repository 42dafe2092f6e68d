import { BadRequestException, ConflictException, NotFoundException } from '@nestjs/common';
import Decimal from 'decimal.js';
import { formatAmount } from '../common/money';
import { missingRateError } from '../fx/fx.service';
import type { MoneyRole } from '../wallets/wallet-state-machine';

/**
 * The answers a wallet money request can be refused with (wallet document §4, provider contract §4), in one place:
 * the database (wallet_money_batch, wallet_fund, wallet_reverse) names the refusal, and these word it.
 */
export const MoneyRefusals = {
  referenceReused: () => new ConflictException('source_transaction_id was already used for a different request'),
  sameWallet: () => new BadRequestException('Source and destination wallets must be different'),
  walletNotFound: (accountNumber: string) => new NotFoundException(`Wallet ${accountNumber} not found`),
  profileDeactivated: (accountNumber: string) =>
    new BadRequestException(`Wallet ${accountNumber} belongs to a deactivated profile and cannot transact`),
  walletState: (accountNumber: string, status: string, role: MoneyRole) =>
    new BadRequestException(
      `Wallet ${accountNumber} is ${status} and ${role === 'RECEIVE' ? 'cannot receive money' : 'cannot be debited'}`,
    ),
  currencyMismatch: () => new BadRequestException('Transfers need source and destination wallets of the same currency'),
  serviceNotFound: () => new NotFoundException('Client service not found'),
  serviceInactive: (code: string) => new BadRequestException(`Client service ${code} is inactive`),
  noRate: (from: string, to: string) => missingRateError(from, to, null),
  staleRate: (from: string, to: string, newestRateAt: Date, maxAgeMs: number) => missingRateError(from, to, { newestRateAt, maxAgeMs }),
  tooSmallToConvert: () => new BadRequestException('Transaction amount is too small to convert'),
  amountOutOfBounds: (minimum: Decimal.Value, maximum: Decimal.Value, currency: string) =>
    new BadRequestException(`Transaction amount must be between ${formatAmount(minimum)} and ${formatAmount(maximum)} ${currency}`),
  feeNotCovered: (fee: Decimal.Value) => new BadRequestException(`Transaction amount must be greater than the fee of ${formatAmount(fee)}`),
  insufficientBalance: (accountNumber: string) => new BadRequestException(`Insufficient balance in wallet ${accountNumber}`),
};
