import { BadRequestException, ConflictException } from '@nestjs/common';

/** Answers shared by the wallet money operations (credits, debits, transfers, reversals). */

/** A merchant reference (source_transaction_id) already used for another request. */
export function referenceReused(): ConflictException {
  return new ConflictException('source_transaction_id was already used for a different request');
}

/** The operation would take a wallet below its floor. */
export function insufficientBalance(accountNumber: string): BadRequestException {
  return new BadRequestException(`Insufficient balance in wallet ${accountNumber}`);
}
