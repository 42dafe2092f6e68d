/** Safaricom's published Daraja callback addresses: MPESA_ALLOWED_IPS' default (provider contract §11). */
export const SAFARICOM_CALLBACK_ADDRESSES = [
  '196.201.214.200',
  '196.201.214.206',
  '196.201.213.114',
  '196.201.214.207',
  '196.201.214.208',
  '196.201.213.44',
  '196.201.212.127',
  '196.201.212.138',
  '196.201.212.129',
  '196.201.212.136',
  '196.201.212.74',
  '196.201.212.69',
];

export interface MpesaConfig {
  baseUrl: string;
  consumerKey: string;
  consumerSecret: string;
  /** STK push: our paybill or till, and its passkey. */
  shortcode: string;
  passkey: string;
  transactionType: 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline';
  /** B2C and B2B PartyA. */
  payoutShortcode: string;
  initiatorName: string;
  initiatorPassword: string;
  /** The operator's X.509 certificate (PEM or DER, as Safaricom hands out .cer files) whose key encrypts the initiator password. */
  certificate: Buffer;
  /** The public base the operator calls back (no trailing slash). */
  callbackBaseUrl: string;
  /** Addresses or CIDRs whose callbacks are accepted; ['*'] accepts any. */
  allowedAddresses: string[];
  /** Bound on each Daraja call (MPESA_TIMEOUT_MS); an unanswered call is asked about, never sent again. */
  timeoutMs: number;
  /** How long reconciliation awaits an Account Balance or Transaction Status result callback (MPESA_RESULT_WAIT_MS). */
  resultWaitMs: number;
  /** The Pull Transactions registration's NominatedNumber (MPESA_PULL_NOMINATED_NUMBER); null: registered by Safaricom. */
  pullNominatedNumber: string | null;
}

export interface JengaConfig {
  baseUrl: string;
  apiKey: string;
  merchantCode: string;
  consumerSecret: string;
  /** Our private key (PEM) that signs each transfer; its public key is registered with Jenga. */
  privateKey: Buffer;
  sourceAccountNumber: string;
  sourceAccountName: string;
  /** Bound on each Jenga call (JENGA_TIMEOUT_MS). */
  timeoutMs: number;
}

export interface AfricasTalkingConfig {
  baseUrl: string;
  /** The Africa's Talking application's username. */
  username: string;
  apiKey: string;
  /** Bound on each Africa's Talking call (AFRICASTALKING_TIMEOUT_MS); a send left unanswered is never sent again. */
  timeoutMs: number;
}

export interface OpenExchangeRatesConfig {
  baseUrl: string;
  appId: string;
  /** Our spread either side of the mid rate, in basis points: buying = mid × (1 − spread), selling = mid × (1 + spread). */
  spreadBps: number;
}

/** Which operator plays each rail (provider contract §11, fixed names), and what the real ones need. */
export interface RailsConfig {
  mobileMoney: 'mpesa' | 'sandbox';
  bank: 'jenga' | 'sandbox';
  airtime: 'africastalking' | 'sandbox';
  /** The sandbox's fixed quotes never price real money: production refuses `sandbox` like any simulated rail. */
  fx: 'openexchangerates' | 'sandbox';
  /** A request the operator has not answered by then is asked about, then again on a back-off. */
  reconcileAfterMs: number;
  /** Each real rail's circuit: open after this many failed calls in a row, for the cool-down, then probed. */
  circuit: { failures: number; cooldownMs: number };
  mpesa: MpesaConfig | null;
  jenga: JengaConfig | null;
  africastalking: AfricasTalkingConfig | null;
  openexchangerates: OpenExchangeRatesConfig | null;
  /**
   * What is missing or malformed; RailsModule refuses to start with any (a provider factory may not throw), naming
   * them together with any rail production would leave to a simulator.
   */
  problems: string[];
}

export const RAILS_CONFIG = Symbol('RAILS_CONFIG');

const MPESA_REQUIRED = [
  'MPESA_CONSUMER_KEY',
  'MPESA_CONSUMER_SECRET',
  'MPESA_SHORTCODE',
  'MPESA_PASSKEY',
  'MPESA_PAYOUT_SHORTCODE',
  'MPESA_INITIATOR_NAME',
  'MPESA_INITIATOR_PASSWORD',
  'MPESA_CERTIFICATE_PATH',
] as const;

const JENGA_REQUIRED = [
  'JENGA_API_KEY',
  'JENGA_MERCHANT_CODE',
  'JENGA_CONSUMER_SECRET',
  'JENGA_PRIVATE_KEY_PATH',
  'JENGA_SOURCE_ACCOUNT_NUMBER',
  'JENGA_SOURCE_ACCOUNT_NAME',
] as const;

const AFRICASTALKING_REQUIRED = ['AFRICASTALKING_USERNAME', 'AFRICASTALKING_API_KEY'] as const;

/**
 * Reads the rail choice and the chosen real operators' variables. Every missing or malformed variable is named in
 * `problems`, so an operator fixes them all at once rather than one start at a time.
 */
export function loadRailsConfig(
  env: NodeJS.ProcessEnv,
  appEnv: 'sandbox' | 'production',
  publicBaseUrl: string,
  readFile: (path: string) => Buffer,
): RailsConfig {
  const problems: string[] = [];
  const value = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const choice = <T extends string>(name: string, real: T): T | 'sandbox' => {
    const chosen = value(name) ?? (appEnv === 'sandbox' ? 'sandbox' : real);
    if (chosen !== real && chosen !== 'sandbox') problems.push(`${name} must be ${real} or sandbox`);
    return chosen as T | 'sandbox';
  };
  const timeout = (name: string, fallback = '15000'): number => {
    const raw = value(name) ?? fallback;
    if (!/^[1-9]\d{2,}$/.test(raw)) problems.push(`${name} must be a whole number of milliseconds, at least 100`);
    return Number(raw) || Number(fallback);
  };
  const mobileMoney = choice('RAIL_MOBILE_MONEY', 'mpesa');
  const bank = choice('RAIL_BANK', 'jenga');
  const airtime = choice('RAIL_AIRTIME', 'africastalking');
  const fx = choice('FX_SOURCE', 'openexchangerates');

  const reconcileRaw = value('RAIL_RECONCILE_AFTER_MS') ?? '120000';
  if (!/^[1-9]\d{2,}$/.test(reconcileRaw)) problems.push('RAIL_RECONCILE_AFTER_MS must be a whole number of milliseconds, at least 100');

  const failuresRaw = value('RAIL_CIRCUIT_FAILURES') ?? '5';
  if (!/^[1-9]\d{0,2}$/.test(failuresRaw)) problems.push('RAIL_CIRCUIT_FAILURES must be a whole number from 1 to 999');
  const cooldownRaw = value('RAIL_CIRCUIT_COOLDOWN_MS') ?? '30000';
  if (!/^[1-9]\d{2,}$/.test(cooldownRaw)) problems.push('RAIL_CIRCUIT_COOLDOWN_MS must be a whole number of milliseconds, at least 100');

  let mpesa: MpesaConfig | null = null;
  if (mobileMoney === 'mpesa') {
    const missing = MPESA_REQUIRED.filter((name) => value(name) === undefined);
    if (missing.length) problems.push(`RAIL_MOBILE_MONEY=mpesa needs ${missing.join(', ')}`);
    const transactionType = value('MPESA_TRANSACTION_TYPE') ?? 'CustomerPayBillOnline';
    if (transactionType !== 'CustomerPayBillOnline' && transactionType !== 'CustomerBuyGoodsOnline') {
      problems.push('MPESA_TRANSACTION_TYPE must be CustomerPayBillOnline or CustomerBuyGoodsOnline');
    }
    let certificate: Buffer = Buffer.alloc(0);
    const certificatePath = value('MPESA_CERTIFICATE_PATH');
    if (certificatePath) {
      try {
        certificate = readFile(certificatePath);
      } catch {
        problems.push(`MPESA_CERTIFICATE_PATH cannot be read: ${certificatePath}`);
      }
    }
    const callbackBaseUrl = (value('MPESA_CALLBACK_BASE_URL') ?? publicBaseUrl).replace(/\/$/, '');
    if (appEnv === 'production' && !callbackBaseUrl.startsWith('https://')) {
      problems.push('MPESA_CALLBACK_BASE_URL (or PUBLIC_BASE_URL) must be https:// in production: Daraja calls back only over HTTPS');
    }
    const allowed = (value('MPESA_ALLOWED_IPS') ?? SAFARICOM_CALLBACK_ADDRESSES.join(','))
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    mpesa = {
      baseUrl: (value('MPESA_BASE_URL') ?? 'https://api.safaricom.co.ke').replace(/\/$/, ''),
      consumerKey: value('MPESA_CONSUMER_KEY') ?? '',
      consumerSecret: value('MPESA_CONSUMER_SECRET') ?? '',
      shortcode: value('MPESA_SHORTCODE') ?? '',
      passkey: value('MPESA_PASSKEY') ?? '',
      transactionType: transactionType as MpesaConfig['transactionType'],
      payoutShortcode: value('MPESA_PAYOUT_SHORTCODE') ?? '',
      initiatorName: value('MPESA_INITIATOR_NAME') ?? '',
      initiatorPassword: value('MPESA_INITIATOR_PASSWORD') ?? '',
      certificate,
      callbackBaseUrl,
      allowedAddresses: allowed,
      timeoutMs: timeout('MPESA_TIMEOUT_MS'),
      resultWaitMs: timeout('MPESA_RESULT_WAIT_MS', '30000'),
      pullNominatedNumber: value('MPESA_PULL_NOMINATED_NUMBER') ?? null,
    };
  }
  let jenga: JengaConfig | null = null;
  if (bank === 'jenga') {
    const missing = JENGA_REQUIRED.filter((name) => value(name) === undefined);
    if (missing.length) problems.push(`RAIL_BANK=jenga needs ${missing.join(', ')}`);
    let privateKey: Buffer = Buffer.alloc(0);
    const keyPath = value('JENGA_PRIVATE_KEY_PATH');
    if (keyPath) {
      try {
        privateKey = readFile(keyPath);
      } catch {
        problems.push(`JENGA_PRIVATE_KEY_PATH cannot be read: ${keyPath}`);
      }
    }
    jenga = {
      baseUrl: (value('JENGA_BASE_URL') ?? 'https://api.finserve.africa').replace(/\/$/, ''),
      apiKey: value('JENGA_API_KEY') ?? '',
      merchantCode: value('JENGA_MERCHANT_CODE') ?? '',
      consumerSecret: value('JENGA_CONSUMER_SECRET') ?? '',
      privateKey,
      sourceAccountNumber: value('JENGA_SOURCE_ACCOUNT_NUMBER') ?? '',
      sourceAccountName: value('JENGA_SOURCE_ACCOUNT_NAME') ?? '',
      timeoutMs: timeout('JENGA_TIMEOUT_MS'),
    };
  }

  let africastalking: AfricasTalkingConfig | null = null;
  if (airtime === 'africastalking') {
    const missing = AFRICASTALKING_REQUIRED.filter((name) => value(name) === undefined);
    if (missing.length) problems.push(`RAIL_AIRTIME=africastalking needs ${missing.join(', ')}`);
    africastalking = {
      baseUrl: (value('AFRICASTALKING_BASE_URL') ?? 'https://api.africastalking.com').replace(/\/$/, ''),
      username: value('AFRICASTALKING_USERNAME') ?? '',
      apiKey: value('AFRICASTALKING_API_KEY') ?? '',
      timeoutMs: timeout('AFRICASTALKING_TIMEOUT_MS'),
    };
  }

  let openexchangerates: OpenExchangeRatesConfig | null = null;
  if (fx === 'openexchangerates') {
    if (value('OPENEXCHANGERATES_APP_ID') === undefined) problems.push('FX_SOURCE=openexchangerates needs OPENEXCHANGERATES_APP_ID');
    const spreadRaw = value('FX_SPREAD_BPS') ?? '50';
    if (!/^\d{1,4}$/.test(spreadRaw)) problems.push('FX_SPREAD_BPS must be a whole number of basis points from 0 to 9999');
    openexchangerates = {
      baseUrl: (value('OPENEXCHANGERATES_BASE_URL') ?? 'https://openexchangerates.org/api').replace(/\/$/, ''),
      appId: value('OPENEXCHANGERATES_APP_ID') ?? '',
      spreadBps: Number(spreadRaw),
    };
  }
  return {
    mobileMoney,
    bank,
    airtime,
    fx,
    reconcileAfterMs: Number(reconcileRaw) || 120000,
    circuit: { failures: Number(failuresRaw) || 5, cooldownMs: Number(cooldownRaw) || 30000 },
    mpesa,
    jenga,
    africastalking,
    openexchangerates,
    problems,
  };
}
