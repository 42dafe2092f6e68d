import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { WalletWithBalance } from './wallet.responses';

/** A profile as the merchant sent it (wallet document §2 "Profile"). */
export class ProfileRecord {
  @ApiProperty({ format: 'uuid' }) profile_id: string;
  @ApiProperty({ example: 'DEMO' }) client_code: string;
  @ApiProperty({ example: 'Jane Doe' }) profile_name: string;
  @ApiProperty({ example: 'INDIVIDUAL' }) profile_type: string;
  @ApiProperty({ example: 'CUST-0001', description: "the merchant's own id of the profile" }) client_profile_id: string;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'jane@example.com' }) profile_email: string | null;
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'number' }], example: '254712345678', description: 'a number in the create response' })
  profile_msisdn: string | number;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Jane Doe' }) contact_person_name: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'jane@example.com' }) contact_person_email: string | null;
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'number' }], example: '254712345678', description: 'a number in the create response' })
  contact_person_msisdn: string | number;
  @ApiPropertyOptional({ type: String, nullable: true, example: '12345678' }) identification_number: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Nairobi' }) physical_address: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'KEN' }) country: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: [0, 1], example: 1 }) is_active: number;
  @ApiProperty({ enum: ['ACTIVE', 'INACTIVE'], example: 'ACTIVE' }) status: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

class ProfileClient {
  @ApiProperty({ format: 'uuid' }) client_id: string;
  @ApiProperty({ example: 'DEMO' }) client_code: string;
}

export class ProfileDetails extends ProfileRecord {
  @ApiProperty({ type: ProfileClient }) client: ProfileClient;
  @ApiProperty({ type: [WalletWithBalance] }) accounts: WalletWithBalance[];
}

export class ProfileStatusChange {
  @ApiProperty({ example: 'CUST-0001', description: 'the client_profile_id' }) id: string;
  @ApiProperty({ enum: ['ACTIVE', 'INACTIVE'], example: 'INACTIVE' }) status: string;
  @ApiProperty({ example: 'Profile deactivated successfully' }) message: string;
}
