import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { WalletPrincipal } from '../auth/principal';
import { envelope, Page } from '../common/http/pagination';
import { formatAmount, Money } from '../common/money';
import { CreateClientServiceDto, FEE_TYPES } from './client-service.dto';

type FeeType = (typeof FEE_TYPES)[number];

/** The catalogue of provider services a client service can be built on; the document names only one. */
const SERVICE_CATALOGUE = {
  CUSTOM_SERVICE: { service_id: '1', service_name: 'Custom service', service_code: 'CUSTOM_SERVICE', service_transaction_type: 'BOTH' },
} as const;

interface ClientServiceRow {
  id: string;
  client_id: string;
  client_name: string;
  code: string;
  name: string;
  service_code: keyof typeof SERVICE_CATALOGUE;
  has_transaction_fee: boolean;
  transaction_fee_type: FeeType | null;
  transaction_fee: string;
  minimum_transaction_amount: string;
  maximum_transaction_amount: string;
  is_active: number;
  settlement_account_id: string | null;
  settlement_account_number: string | null;
  settlement_currency: string | null;
  created_at: Date;
  updated_at: Date;
  tiers: Array<{ minimum_amount: string; maximum_amount: string; fee_type: FeeType; fee: string }>;
}

const SELECT_SERVICE = `
  SELECT s.*, c.name AS client_name, la.account_number AS settlement_account_number, la.currency AS settlement_currency,
    coalesce((SELECT json_agg(json_build_object('minimum_amount', t.minimum_amount, 'maximum_amount', t.maximum_amount,
                'fee_type', t.fee_type, 'fee', t.fee) ORDER BY t.minimum_amount)
              FROM client_service_fee_tiers t WHERE t.client_id = s.client_id AND t.client_service_id = s.id), '[]') AS tiers
  FROM client_services s
  JOIN clients c ON c.id = s.client_id
  LEFT JOIN ledger_accounts la ON la.client_id = s.client_id AND la.id = s.settlement_account_id`;

@Injectable()
export class ClientServicesService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async create(principal: WalletPrincipal, dto: CreateClientServiceDto) {
    const minimum = new Money(dto.minimum_transaction_amount);
    const maximum = new Money(dto.maximum_transaction_amount);
    if (minimum.gt(maximum)) {
      throw new BadRequestException(['minimum_transaction_amount must not be greater than maximum_transaction_amount']);
    }
    const tiers = dto.transaction_fee_tiers ?? [];
    if (dto.has_transaction_fee && tiers.length === 0 && (!dto.transaction_fee_type || dto.transaction_fee === undefined)) {
      throw new BadRequestException(['transaction_fee_type and transaction_fee are required when has_transaction_fee is true']);
    }
    for (const [index, tier] of tiers.entries()) {
      if (new Money(tier.minimum_amount).gt(new Money(tier.maximum_amount))) {
        throw new BadRequestException([`transaction_fee_tiers.${index}: minimum_amount must not be greater than maximum_amount`]);
      }
    }
    const percentages = [
      ...(dto.transaction_fee_type === 'PERCENTAGE' && dto.transaction_fee !== undefined ? [dto.transaction_fee] : []),
      ...tiers.filter((t) => t.fee_type === 'PERCENTAGE').map((t) => t.fee),
    ];
    if (percentages.some((p) => new Money(p).gt(100))) {
      throw new BadRequestException(['a PERCENTAGE fee must not be greater than 100']);
    }
    const id = await this.db.transaction(async (manager) => {
      const [row] = await manager.query(
        `INSERT INTO client_services (client_id, name, service_code, has_transaction_fee, transaction_fee_type, transaction_fee,
           minimum_transaction_amount, maximum_transaction_amount, is_active)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
        [
          principal.clientId,
          dto.client_service_name,
          dto.service_code,
          dto.has_transaction_fee,
          dto.has_transaction_fee ? (dto.transaction_fee_type ?? null) : null,
          dto.has_transaction_fee ? new Money(dto.transaction_fee ?? 0).toFixed() : '0',
          minimum.toFixed(),
          maximum.toFixed(),
          dto.is_active,
        ],
      );
      for (const tier of tiers) {
        await manager.query(
          `INSERT INTO client_service_fee_tiers (client_id, client_service_id, minimum_amount, maximum_amount, fee_type, fee)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [
            principal.clientId,
            row.id,
            new Money(tier.minimum_amount).toFixed(),
            new Money(tier.maximum_amount).toFixed(),
            tier.fee_type,
            new Money(tier.fee).toFixed(),
          ],
        );
      }
      return row.id as string;
    });
    const [created] = await this.db.query(`${SELECT_SERVICE} WHERE s.id = $1`, [id]);
    return { ...record(created), client_code: principal.clientCode, client_service_name: created.name };
  }

  async list(principal: WalletPrincipal, page: Page) {
    const rows: ClientServiceRow[] = await this.db.query(
      `${SELECT_SERVICE} WHERE s.client_id = $1 ORDER BY s.created_at, s.id LIMIT $2 OFFSET $3`,
      [principal.clientId, page.limit, page.offset],
    );
    const [counts] = await this.db.query(
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE is_active = 1)::int AS active FROM client_services WHERE client_id = $1`,
      [principal.clientId],
    );
    return envelope(
      page,
      counts.total,
      [
        { name: 'active', count: counts.active },
        { name: 'inactive', count: counts.total - counts.active },
      ],
      rows.map(record),
    );
  }

  /** Points a service at the wallet it settles into (collections) and pays from (payouts). */
  async setSettlementWallet(manager: EntityManager, clientId: string, code: string, accountId: string): Promise<void> {
    const result = await manager.query(
      `UPDATE client_services SET settlement_account_id = $3, updated_at = now() WHERE client_id = $1 AND code = $2`,
      [clientId, code, accountId],
    );
    if (result[1] === 0) throw new NotFoundException('Client service not found');
  }
}

function record(row: ClientServiceRow) {
  return {
    transaction_fee_tiers: row.tiers.map((t) => ({
      minimum_amount: formatAmount(t.minimum_amount),
      maximum_amount: formatAmount(t.maximum_amount),
      fee_type: t.fee_type,
      fee: formatAmount(t.fee),
    })),
    client_service_id: row.id,
    client_service_name: row.name,
    client_service_code: row.code,
    minimum_transaction_amount: formatAmount(row.minimum_transaction_amount),
    maximum_transaction_amount: formatAmount(row.maximum_transaction_amount),
    is_active: row.is_active,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
    has_transaction_fee: row.has_transaction_fee,
    transaction_fee_type: row.transaction_fee_type,
    transaction_fee: formatAmount(row.transaction_fee),
    settlement_account_number: row.settlement_account_number,
    service: SERVICE_CATALOGUE[row.service_code],
    client: { client_id: row.client_id, client_name: row.client_name },
  };
}
