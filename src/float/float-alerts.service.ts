import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { minorUnits } from '../common/currencies';
import { amountProblem, formatAmount, Money } from '../common/money';
import { MSISDN } from '../common/validation/validators';

/** A float's low-balance alert as the portal and the CLI show it. */
export interface FloatAlert {
  account_number: string;
  currency: string;
  threshold: string;
  /** Where a low alert re-arms: the threshold plus 10% (migration 1763800000038). */
  rearm_balance: string;
  contact_msisdn: string | null;
  /** Fired and not yet re-armed: the portal's banner shows. */
  low: boolean;
  /** How many times it has fired. */
  alerts: number;
  changed_at: Date;
}

/** What a merchant sets: the threshold as typed (a numeric string) and an optional SMS number. */
export interface FloatAlertSetting {
  threshold: unknown;
  contact?: unknown;
}

const SELECT_ALERT = `SELECT a.account_number, a.currency, f.threshold, f.rearm_at AS rearm_balance, f.contact_msisdn, f.low, f.alerts,
    f.changed_at
  FROM float_alerts f JOIN ledger_accounts a ON a.client_id = f.client_id AND a.id = f.account_id`;

/**
 * Low-balance alerts on a client's floats (issue 34): setting and clearing the threshold. Firing and re-arming is
 * SQL function float_low_balance_follow (src/float/sql/float_low_balance_follow.sql), which the posting core calls.
 */
@Injectable()
export class FloatAlertsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The float (settlement wallet) a client service of the client pays from, by its account number; null when none. */
  async floatOfService(clientId: string, serviceCode: string): Promise<string | null> {
    const [row] = await this.db.query(
      `SELECT a.account_number FROM client_services s JOIN ledger_accounts a ON a.client_id = s.client_id AND a.id = s.settlement_account_id
       WHERE s.client_id = $1 AND s.code = $2`,
      [clientId, serviceCode],
    );
    return row?.account_number ?? null;
  }

  /**
   * Sets (or replaces) the alert of one of the client's floats. The state starts from the balance now, under the
   * float's lock so that no posting moves it meanwhile: a balance already below the threshold is low at once (the
   * banner shows) without a callback, as nothing crossed; it re-arms like any other.
   */
  async set(clientId: string, accountNumber: string, setting: FloatAlertSetting): Promise<FloatAlert> {
    return this.db.transaction(async (manager) => {
      const float = await this.lockFloat(manager, clientId, accountNumber);
      const threshold = thresholdOf(setting.threshold, float.currency);
      const contact = contactOf(setting.contact);
      await manager.query(
        `INSERT INTO float_alerts (client_id, account_id, threshold, minor_units, contact_msisdn, low)
         VALUES ($1, $2, $3, $4, $5, $6::numeric < $3::numeric)
         ON CONFLICT (client_id, account_id) DO UPDATE SET threshold = EXCLUDED.threshold, minor_units = EXCLUDED.minor_units,
           contact_msisdn = EXCLUDED.contact_msisdn, low = EXCLUDED.low, changed_at = EXCLUDED.changed_at`,
        [clientId, float.id, threshold, minorUnits(float.currency), contact, float.balance],
      );
      const [alert] = await manager.query(`${SELECT_ALERT} WHERE f.client_id = $1 AND f.account_id = $2`, [clientId, float.id]);
      return shown(alert);
    });
  }

  /** Removes the alert of one of the client's floats; false when it had none. */
  async clear(clientId: string, accountNumber: string): Promise<boolean> {
    const [, removed] = await this.db.query(
      `DELETE FROM float_alerts f USING ledger_accounts a WHERE f.client_id = $1 AND a.client_id = f.client_id AND f.account_id = a.id AND a.account_number = $2`,
      [clientId, accountNumber],
    );
    return removed > 0;
  }

  /** The client's alerts, by account number. */
  async alertsOf(clientId: string): Promise<FloatAlert[]> {
    const rows = await this.db.query(`${SELECT_ALERT} WHERE f.client_id = $1 ORDER BY a.account_number`, [clientId]);
    return rows.map(shown);
  }

  /** One of the client's floats (a wallet some service of theirs pays from), locked as a posting locks it. */
  private async lockFloat(manager: EntityManager, clientId: string, accountNumber: string) {
    const [float]: { id: string; currency: string; balance: string }[] = await manager.query(
      `SELECT a.id, a.currency, a.balance FROM ledger_accounts a
       WHERE a.account_number = $1 AND a.client_id = $2
         AND EXISTS (SELECT 1 FROM client_services s WHERE s.client_id = a.client_id AND s.settlement_account_id = a.id)
       FOR NO KEY UPDATE`,
      [accountNumber, clientId],
    );
    if (!float) throw new NotFoundException(`No float account ${accountNumber}`);
    return float;
  }
}

/** A positive amount with at most the currency's minor-unit digits, as a decimal string. */
function thresholdOf(value: unknown, currency: string): string {
  const problem = typeof value === 'string' ? amountProblem(value.trim()) : 'must be a number';
  if (problem) throw new BadRequestException(`The threshold ${problem}.`);
  const threshold = new Money((value as string).trim());
  const digits = minorUnits(currency);
  if (threshold.decimalPlaces() > digits)
    throw new BadRequestException(`The threshold must have at most ${digits} decimal places in ${currency}.`);
  return threshold.toFixed(digits);
}

/** An optional phone number: empty means none. */
function contactOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const text = typeof value === 'string' ? value.trim() : '';
  if (typeof value === 'string' && text === '') return null;
  if (!MSISDN.test(text)) throw new BadRequestException('The SMS number must be 6 or more digits with an optional leading +.');
  return text;
}

function shown(row: FloatAlert & { threshold: string; rearm_balance: string }): FloatAlert {
  return { ...row, threshold: formatAmount(row.threshold), rearm_balance: formatAmount(row.rearm_balance) };
}
