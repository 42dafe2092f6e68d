import type { RailAnswer } from '../rail-requests.repository';

/**
 * STK push result codes that are a payer's final "no" (the payment fails, 701): the table "Result codes" of Daraja's
 * "M-Pesa Express" page. Any other non-zero code is not understood as an outcome: it is logged and counted, the
 * payment stays pending (703) and is asked about by STK query.
 */
export const STK_FAILURES: Record<string, string> = {
  '1': 'Insufficient funds in the payer’s M-Pesa account',
  '2': 'Below M-Pesa’s minimum payment',
  '3': 'Above M-Pesa’s maximum payment',
  '4': 'Over the payer’s daily transfer limit',
  '8': 'Over the receiving account’s balance limit',
  '17': 'M-Pesa refused a second identical payment within 2 minutes',
  '1019': 'The payer did not answer before the request expired',
  '1025': 'M-Pesa could not send the prompt to the payer',
  '1032': 'Cancelled by the payer',
  '1037': 'The payer’s phone could not be reached',
  '2001': 'The payer entered a wrong PIN',
  '2028': 'M-Pesa does not permit this payment to our shortcode',
  '8006': 'The payer’s M-Pesa PIN is locked',
  SFC_IC0003: 'M-Pesa does not know the receiving shortcode',
};

/**
 * Result codes that are M-Pesa's final refusal of a B2C, B2B or reversal (the money did not move): the "Result
 * Codes" tables of Daraja's "Business To Customer" and "Reversal" pages (the B2B pages show 2001 and no table; the
 * same M-Pesa core codes apply). `R000001` (already reversed) is missing on purpose: someone reversed the payment,
 * which is not this reversal failing, so it is held for an operator.
 */
export const TRANSACTION_FAILURES: Record<string, string> = {
  '1': 'Our M-Pesa account’s balance is insufficient',
  '2': 'Below M-Pesa’s minimum transaction amount',
  '3': 'Above M-Pesa’s maximum transaction amount',
  '4': 'Over the daily transfer limit',
  '8': 'Over the recipient’s maximum balance',
  '11': 'Our M-Pesa account is in an invalid state',
  '21': 'Our API user may not initiate this request',
  '2001': 'Our API user’s credentials are invalid',
  '2006': 'Our M-Pesa account’s status does not allow this transaction',
  '2028': 'Our shortcode is not permitted this transaction',
  '2040': 'The recipient is not a registered M-Pesa customer',
  '8006': 'Our API user’s security credential is locked',
  SFC_IC0003: 'The recipient does not exist on M-Pesa',
  R000002: 'M-Pesa does not know the transaction to reverse',
};

/** A reversal result: the payment was already reversed (documented, but not this reversal's outcome). */
export const REVERSED_ALREADY = 'R000001';

type Item = { Name?: unknown; Key?: unknown; Value?: unknown };

/** A named value of a CallbackMetadata Item list or a ResultParameter list (a single entry comes as an object). */
function item(items: unknown, name: string): string | null {
  const list = (Array.isArray(items) ? items : items && typeof items === 'object' ? [items] : []) as Item[];
  const found = list.find((entry) => entry.Name === name || entry.Key === name);
  return found?.Value === undefined || found.Value === null ? null : String(found.Value);
}

const text = (value: unknown): string | null => (value === undefined || value === null ? null : String(value));

/** The identifiers and result of an STK callback (`Body.stkCallback`), or null when the body is not one. */
export function readStkCallback(body: unknown): {
  merchantRequestId: string | null;
  checkoutRequestId: string;
  code: string;
  answer: RailAnswer | null;
} | null {
  const stk = (body as { Body?: { stkCallback?: Record<string, unknown> } } | null)?.Body?.stkCallback;
  if (!stk || typeof stk !== 'object' || !text(stk.CheckoutRequestID) || text(stk.ResultCode) === null) return null;
  const metadata = (stk.CallbackMetadata as { Item?: unknown } | undefined)?.Item;
  return {
    merchantRequestId: text(stk.MerchantRequestID),
    checkoutRequestId: text(stk.CheckoutRequestID)!,
    code: text(stk.ResultCode)!,
    answer: stkAnswer(text(stk.ResultCode)!, text(stk.ResultDesc), item(metadata, 'MpesaReceiptNumber')),
  };
}

/** What an STK result code (from a callback or an STK query) means; null: a code we do not know, not an outcome. */
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
 * A B2C, B2B or reversal result: 0 is done (the receipt is the M-Pesa transaction id); a documented failure code is
 * M-Pesa's final refusal, and the money was not moved; null for any other code (not an outcome: asked about again).
 */
export function transactionAnswer(result: DarajaResult): RailAnswer | null {
  if (result.code === '0') {
    const receipt = result.transactionId ?? item(result.parameters, 'TransactionReceipt');
    return { outcome: 'SUCCEEDED', resultCode: '0', description: 'Processed successfully', receipt };
  }
  const failure = TRANSACTION_FAILURES[result.code];
  if (!failure) return null;
  return { outcome: 'FAILED', resultCode: result.code, description: result.description || failure, receipt: null };
}

/** A status query's answer that M-Pesa has no transaction under the conversation id asked about. */
export const UNKNOWN_TO_OPERATOR = 'UNKNOWN_TO_OPERATOR';

/** Transaction status words that are final: `Completed` (Daraja's "Transaction Status" page) and M-Pesa's words for a transaction that did not complete. */
const FINAL_STATUSES = ['completed', 'failed', 'cancelled', 'expired', 'declined'];

/**
 * A transaction status query's answer about the transaction asked after: final when M-Pesa reports it completed or
 * failed; UNKNOWN_TO_OPERATOR when it knows no such transaction (R000002, "invalid"); `query-failed` when the query
 * itself was refused (SFC_IC0003: our API user is unknown); `unknown` for a code or status word we do not know.
 * Neither of the last two is an outcome: the request is asked about again.
 */
export function statusAnswer(
  result: DarajaResult,
): RailAnswer | typeof UNKNOWN_TO_OPERATOR | { notYet: 'query-failed' | 'unknown'; word: string } {
  if (result.code === 'R000002') return UNKNOWN_TO_OPERATOR;
  if (result.code === 'SFC_IC0003') return { notYet: 'query-failed', word: result.code };
  if (result.code !== '0') return { notYet: 'unknown', word: result.code };
  const word = item(result.parameters, 'TransactionStatus') ?? '';
  const status = word.toLowerCase();
  if (!FINAL_STATUSES.includes(status)) return { notYet: 'unknown', word };
  if (status === 'completed') {
    return { outcome: 'SUCCEEDED', resultCode: '0', description: 'Processed successfully', receipt: item(result.parameters, 'ReceiptNo') };
  }
  return { outcome: 'FAILED', resultCode: status.toUpperCase(), description: `M-Pesa reports the transaction ${status}`, receipt: null };
}
