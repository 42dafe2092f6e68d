import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { IsMsisdn, LIMITS, RequiredText } from '../common/validation/validators';

export class CreateProfileDto {
  @ApiProperty({ example: 'DEMO' }) @RequiredText(LIMITS.code) client_code: string;
  @ApiProperty({ example: 'Jane Doe' }) @RequiredText(LIMITS.name) profile_name: string;
  @ApiProperty({ example: 'INDIVIDUAL', enum: ['BUSINESS', 'INDIVIDUAL'] }) @IsIn(['BUSINESS', 'INDIVIDUAL']) profile_type:
    'BUSINESS' | 'INDIVIDUAL';
  @ApiProperty({ example: 'CUST-0001' }) @RequiredText(LIMITS.reference) client_profile_id: string;
  @ApiProperty({ example: 'jane@example.com' }) @RequiredText(LIMITS.email) @IsEmail() profile_email: string;
  @ApiProperty({ example: '254700000000' }) @IsMsisdn() profile_msisdn: string;
  @ApiProperty({ example: 'Jane Doe' }) @RequiredText(LIMITS.name) contact_person_name: string;
  @ApiProperty({ example: 'jane@example.com' }) @RequiredText(LIMITS.email) @IsEmail() contact_person_email: string;
  @ApiProperty({ example: '254712345678' }) @IsMsisdn() contact_person_msisdn: string;
  @ApiProperty({ example: '12345678' }) @RequiredText(LIMITS.identificationNumber) identification_number: string;
  @ApiProperty({ example: 'Kenyatta Avenue, Nairobi' }) @RequiredText(LIMITS.text) physical_address: string;
  @ApiProperty({ example: 'KEN' }) @RequiredText(LIMITS.country) country: string;
  @ApiPropertyOptional({ example: 'Retail customer' }) @IsOptional() @IsString() @MaxLength(LIMITS.text) description?: string;
  @ApiProperty({ example: 1, enum: [0, 1] }) @IsIn([0, 1]) is_active: number;
}

export const PROFILE_COMMANDS = ['ACTIVATE', 'DEACTIVATE'] as const;
export class ProfileCommandQuery {
  @ApiProperty({ enum: PROFILE_COMMANDS }) @IsIn(PROFILE_COMMANDS) command: (typeof PROFILE_COMMANDS)[number];
}
