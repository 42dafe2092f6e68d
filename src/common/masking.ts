/**
 * A phone or account number as documents that leave the system show it: its first four and last three characters
 * with the rest starred ("2547*****678"), enough to recognise the recipient without disclosing the number. Short
 * numbers keep only their last three characters.
 */
export function maskNumber(value: string): string {
  if (value.length <= 3) return '*'.repeat(value.length);
  if (value.length <= 8) return `${'*'.repeat(value.length - 3)}${value.slice(-3)}`;
  return `${value.slice(0, 4)}${'*'.repeat(value.length - 7)}${value.slice(-3)}`;
}
