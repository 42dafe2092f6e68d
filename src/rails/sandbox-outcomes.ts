/**
 * The sandbox rails' test numbers (provider contract §7, fixed): the outcome is decided by how the payer's or
 * recipient's number ends.
 */
export type SandboxBehaviour = 'FAIL' | 'STAY_PENDING' | 'JAM' | 'OTP' | 'AUTHORIZE' | 'SUCCEED';

export const SANDBOX_OTP = '123456';

export function sandboxBehaviour(number: string): SandboxBehaviour {
  const digits = number.replace(/\D/g, '');
  if (digits.endsWith('254700000001') || digits.endsWith('0000000001')) return 'FAIL';
  if (digits.endsWith('254700000002') || digits.endsWith('0000000002')) return 'STAY_PENDING';
  if (digits.endsWith('254700000003') || digits.endsWith('0000000003')) return 'JAM';
  if (digits.endsWith('254700000004')) return 'OTP';
  if (digits.endsWith('254700000005')) return 'AUTHORIZE';
  return 'SUCCEED';
}
