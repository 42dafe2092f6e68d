import type { RailAnswer } from '../rail-requests.repository';

/**
 * STK push result codes that are a payer's final "no" (the payment fails, 701). Any other non-zero code is not
 * understood as an outcome: the payment stays pending (703) and is asked about by STK query.
 */
export const STK_FAILURES: Record<string, string> = {
  '1': 'Insufficient funds in the payer’s M-Pesa account',
  '17': 'M-Pesa refused a second identical payment within 2 minutes',
  '1019': 'The payer did not answer before the request expired',
  '1032': 'Cancelled by the payer',
  '1037': 'The payer’s phone could not be reached',
  '2001': 'The payer entered a wrong PIN',
};

type Items = { Name?: unknown; Key?: unknown; Value?: unknown }[];

function item(items: unknown, name: string): string | null {
  if (!Array.isArray(items)) return null;
  const found = (items as Items).find((entry) => entry.Name === name || entry.Key === name);
  return found?.Value === undefined || found.Value === null ? null : String(found.Value);
}

const text = (value: unknown): string | null => (value === undefined || value === null ? null : String(value));

/** The identifiers and result of an STK callback (`Body.stkCallback`), or null when the body is not one. */
export function readStkCallback(body: unknown): {
  merchantRequestId: string | null;
  checkoutRequestId: string;
  answer: RailAnswer | null;
} | null {
  const stk = (body as { Body?: { stkCallback?: Record<string, unknown> } } | null)?.Body?.stkCallback;
  if (!stk || typeof stk !== 'object' || !text(stk.CheckoutRequestID) || text(stk.ResultCode) === null) return null;
  const metadata = (stk.CallbackMetadata as { Item?: unknown } | undefined)?.Item;
  return {
    merchantRequestId: text(stk.MerchantRequestID),
    checkoutRequestId: text(stk.CheckoutRequestID)!,
    answer: stkAnswer(text(stk.ResultCode)!, text(stk.ResultDesc), item(metadata, 'MpesaReceiptNumber')),
  };
}

/** What an STK result code (from a callback or an STK query) means; null: not an outcome yet. */
export function stkAnswer(code: string, description: string | null, receipt: string | null): RailAnswer | null {
  if (code === '0') {
    return { outcome: 'SUCCEEDED', resultCode: code, description: description ?? 'Paid', receipt };
  }
  const failure = STK_FAILURES[code];
  if (!failure) return null;
  return { outcome: 'FAILED', resultCode: code, description: failure, receipt: null };
}

/** The `Result` of an asynchronous Daraja call (B2C, B2B, reversal, transaction status), or null when not one. */
export interface DarajaResult {
  code: string;
  description: string;
  originatorConversationId: string | null;
  conversationId: string | null;
  transactionId: string | null;
  parameters: unknown;
}

export function readResult(body: unknown): DarajaResult | null {
  const result = (body as { Result?: Record<string, unknown> } | null)?.Result;
  if (!result || typeof result !== 'object' || text(result.ResultCode) === null) return null;
  return {
    code: text(result.ResultCode)!,
    description: text(result.ResultDesc) ?? '',
    originatorConversationId: text(result.OriginatorConversationID),
    conversationId: text(result.ConversationID),
    transactionId: text(result.TransactionID),
    parameters: (result.ResultParameters as { ResultParameter?: unknown } | undefined)?.ResultParameter,
  };
}

/**
 * A B2C, B2B or reversal result: 0 is done (the receipt is the M-Pesa transaction id); any other code is M-Pesa's
 * final refusal of the transaction, and the money was not moved.
 */
export function transactionAnswer(result: DarajaResult): RailAnswer {
  if (result.code === '0') {
    const receipt = result.transactionId ?? item(result.parameters, 'TransactionReceipt');
    return { outcome: 'SUCCEEDED', resultCode: '0', description: 'Processed successfully', receipt };
  }
  return { outcome: 'FAILED', resultCode: result.code, description: result.description || `M-Pesa result ${result.code}`, receipt: null };
}

/** A status query's answer that M-Pesa has no transaction under the conversation id asked about. */
export const UNKNOWN_TO_OPERATOR = 'UNKNOWN_TO_OPERATOR';

/**
 * A transaction status query's answer about the transaction asked after: final when M-Pesa reports it completed or
 * failed; UNKNOWN_TO_OPERATOR when it knows no such transaction; null when the query itself failed or the
 * transaction is still open (ask again later).
 */
export function statusAnswer(result: DarajaResult): RailAnswer | typeof UNKNOWN_TO_OPERATOR | null {
  if (result.code === 'R000002' || /invalid|not found|does not exist/i.test(result.description)) return UNKNOWN_TO_OPERATOR;
  if (result.code !== '0') return null;
  const status = (item(result.parameters, 'TransactionStatus') ?? '').toLowerCase();
  const receipt = item(result.parameters, 'ReceiptNo');
  if (status === 'completed') return { outcome: 'SUCCEEDED', resultCode: '0', description: 'Processed successfully', receipt };
  if (['failed', 'cancelled', 'expired', 'declined'].includes(status)) {
    return { outcome: 'FAILED', resultCode: status.toUpperCase(), description: `M-Pesa reports the transaction ${status}`, receipt: null };
  }
  return null;
}
