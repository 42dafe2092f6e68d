import { MoneyProperty } from '../common/openapi/api-docs';
import { ApiProperty } from '@nestjs/swagger';
import { ListMetadata, ListStatistic } from '../common/openapi/list-envelope';

class FeeTierRecord {
  @MoneyProperty('answer', { example: '0.0000' }) minimum_amount: string;
  @MoneyProperty('answer', { example: '1000.0000' }) maximum_amount: string;
  @ApiProperty({ enum: ['FIXED', 'PERCENTAGE'], example: 'FIXED' }) fee_type: string;
  @MoneyProperty('answer', { example: '10.0000' }) fee: string;
}

class ProviderService {
  @ApiProperty({ example: '1' }) service_id: string;
  @ApiProperty({ example: 'Custom service' }) service_name: string;
  @ApiProperty({ example: 'CUSTOM_SERVICE' }) service_code: string;
  @ApiProperty({ example: 'BOTH' }) service_transaction_type: string;
}

class ServiceClient {
  @ApiProperty({ format: 'uuid' }) client_id: string;
  @ApiProperty({ example: 'Demo merchant' }) client_name: string;
}

/** A client service (wallet document §2 "Client service"). */
export class ClientServiceRecord {
  @ApiProperty({ type: [FeeTierRecord] }) transaction_fee_tiers: FeeTierRecord[];
  @ApiProperty({ format: 'uuid' }) client_service_id: string;
  @ApiProperty({ example: 'Wallet top-up' }) client_service_name: string;
  @ApiProperty({ example: 'CS1001' }) client_service_code: string;
  @MoneyProperty('answer', { example: '10.0000' }) minimum_transaction_amount: string;
  @MoneyProperty('answer', { example: '150000.0000' }) maximum_transaction_amount: string;
  @ApiProperty({ enum: [0, 1], example: 1 }) is_active: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ example: true }) has_transaction_fee: boolean;
  @ApiProperty({ enum: ['FIXED', 'PERCENTAGE'], nullable: true, example: 'FIXED' }) transaction_fee_type: string | null;
  @MoneyProperty('answer', { example: '1.5000' }) transaction_fee: string;
  @ApiProperty({ type: String, nullable: true, example: '1000000009', description: 'the float wallet payouts under it pay from' })
  settlement_account_number: string | null;
  @ApiProperty({ type: ProviderService }) service: ProviderService;
  @ApiProperty({ type: ServiceClient }) client: ServiceClient;
}

export class CreatedClientService extends ClientServiceRecord {
  @ApiProperty({ example: 'DEMO' }) client_code: string;
}

export class ClientServiceList {
  @ApiProperty({ type: ListMetadata }) metadata: ListMetadata;
  @ApiProperty({ type: [ListStatistic] }) statistics: ListStatistic[];
  @ApiProperty({ type: [ClientServiceRecord] }) records: ClientServiceRecord[];
}
