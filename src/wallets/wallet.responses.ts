import { FreeObjectProperty, MoneyProperty } from '../common/openapi/api-docs';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ListMetadata, ListStatistic } from '../common/openapi/list-envelope';

/** The wallet document's 0/1 flags. */
type Flag = 0 | 1;
const FLAG = { type: 'integer', enum: [0, 1], example: 1 } as const;

export class AccountTypeRecord {
  @ApiProperty({ format: 'uuid' }) account_type_id: string;
  @ApiProperty({ example: 'SAVINGS' }) account_type_code: string;
  @ApiProperty({ example: 'Savings' }) account_type_name: string;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Customer savings wallets' }) account_type_description: string | null;
  @ApiProperty(FLAG) is_active: Flag;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

class ClientRef {
  @ApiProperty({ format: 'uuid' }) client_id: string;
  @ApiProperty({ example: 'DEMO' }) client_code: string;
}

export class AccountTypeListRecord extends AccountTypeRecord {
  @ApiProperty(FLAG) is_mandatory_account: Flag;
  @ApiProperty(FLAG) is_default: Flag;
  @ApiProperty({ type: ClientRef }) client: ClientRef;
}

export class AccountTypeList {
  @ApiProperty({ type: ListMetadata }) metadata: ListMetadata;
  @ApiProperty({ type: [ListStatistic] }) statistics: ListStatistic[];
  @ApiProperty({ type: [AccountTypeListRecord] }) records: AccountTypeListRecord[];
}

export class WalletRecord {
  @ApiProperty({ format: 'uuid' }) account_id: string;
  @ApiProperty({ example: '10000100001' }) account_number: string;
  @ApiProperty({ example: 'Jane Doe savings' }) account_name: string;
  @ApiProperty({ example: 'KES' }) currency: string;
  @MoneyProperty('answer', { example: '0.0000' }) minimum_balance: string;
  @ApiProperty({ example: false }) can_overdraw: boolean;
  @ApiProperty({ enum: ['PRE_ACTIVE', 'ACTIVE', 'DORMANT', 'SUSPENDED', 'CLOSED'], example: 'ACTIVE' }) status: string;
  @ApiPropertyOptional({ type: String, nullable: true }) status_description: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

/** A wallet with its ledger balance, as fetched or listed under its profile. */
export class WalletWithBalance extends WalletRecord {
  @MoneyProperty('answer', { example: '1500.0000' }) current_balance: string;
}

class WalletClient {
  @ApiProperty({ format: 'uuid' }) client_id: string;
  @ApiProperty({ example: 'Demo merchant' }) client_name: string;
  @ApiProperty({ example: 'DEMO' }) client_code: string;
}

export class WalletDetails extends WalletWithBalance {
  @FreeObjectProperty({ nullable: true, description: 'the owning profile, as GET client-profiles returns it' }) profile: object | null;
  @ApiProperty({ type: WalletClient }) client: WalletClient;
}

export class WalletStatusChange {
  @ApiProperty({ example: '10000100001' }) account_number: string;
  @ApiProperty({ example: 'SUSPENDED' }) status: string;
  @ApiProperty({ example: 'Wallet status is SUSPENDED' }) message: string;
}
