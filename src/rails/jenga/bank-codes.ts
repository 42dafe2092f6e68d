/**
 * Kenyan banks reachable by PesaLink, by the two-digit bank code `recipient_bank_code` carries (the Kenya Bankers
 * Association's codes, as PesaLink and Jenga use them).
 */
export const KENYA_BANK_CODES: Record<string, string> = {
  '01': 'Kenya Commercial Bank',
  '02': 'Standard Chartered Bank Kenya',
  '03': 'Absa Bank Kenya',
  '05': 'Bank of India',
  '06': 'Bank of Baroda (Kenya)',
  '07': 'NCBA Bank Kenya',
  '10': 'Prime Bank',
  '11': 'Co-operative Bank of Kenya',
  '12': 'National Bank of Kenya',
  '14': 'M-Oriental Bank',
  '16': 'Citibank N.A. Kenya',
  '18': 'Middle East Bank Kenya',
  '19': 'Bank of Africa Kenya',
  '23': 'Consolidated Bank of Kenya',
  '25': 'Credit Bank',
  '31': 'Stanbic Bank Kenya',
  '35': 'ABC Bank (African Banking Corporation)',
  '39': 'Imperial Bank (in receivership)',
  '43': 'Ecobank Kenya',
  '49': 'Spire Bank',
  '50': 'Paramount Bank',
  '51': 'Kingdom Bank',
  '53': 'Guaranty Trust Bank Kenya',
  '54': 'Victoria Commercial Bank',
  '55': 'Guardian Bank',
  '57': 'I&M Bank',
  '59': 'Development Bank of Kenya',
  '60': 'SBM Bank Kenya',
  '61': 'Housing Finance Company of Kenya',
  '63': 'Diamond Trust Bank Kenya',
  '65': 'Mayfair CIB Bank',
  '66': 'Sidian Bank',
  '68': 'Equity Bank Kenya',
  '70': 'Family Bank',
  '72': 'Gulf African Bank',
  '74': 'First Community Bank',
  '75': 'DIB Bank Kenya',
  '76': 'UBA Kenya Bank',
  '78': 'KWFT Bank',
  '89': 'Stima Sacco',
};

/** The bank's name, or null when PesaLink knows no bank under this code. */
export function bankName(code: string | null): string | null {
  return code ? (KENYA_BANK_CODES[code.padStart(2, '0')] ?? null) : null;
}
