import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { IsMsisdn, LIMITS, RequiredText } from '../common/validation/validators';

export class CreateProfileDto {
  @ApiProperty() @RequiredText(LIMITS.code) client_code: string;
  @ApiProperty() @RequiredText(LIMITS.name) profile_name: string;
  @ApiProperty({ enum: ['BUSINESS', 'INDIVIDUAL'] }) @IsIn(['BUSINESS', 'INDIVIDUAL']) profile_type: 'BUSINESS' | 'INDIVIDUAL';
  @ApiProperty() @RequiredText(LIMITS.reference) client_profile_id: string;
  @ApiProperty() @RequiredText(LIMITS.email) @IsEmail() profile_email: string;
  @ApiProperty({ example: '254700000000' }) @IsMsisdn() profile_msisdn: string;
  @ApiProperty() @RequiredText(LIMITS.name) contact_person_name: string;
  @ApiProperty() @RequiredText(LIMITS.email) @IsEmail() contact_person_email: string;
  @ApiProperty() @IsMsisdn() contact_person_msisdn: string;
  @ApiProperty() @RequiredText(LIMITS.identificationNumber) identification_number: string;
  @ApiProperty() @RequiredText(LIMITS.text) physical_address: string;
  @ApiProperty() @RequiredText(LIMITS.country) country: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(LIMITS.text) description?: string;
  @ApiProperty({ enum: [0, 1] }) @IsIn([0, 1]) is_active: number;
}

export const PROFILE_COMMANDS = ['ACTIVATE', 'DEACTIVATE'] as const;
export class ProfileCommandQuery {
  @ApiProperty({ enum: PROFILE_COMMANDS }) @IsIn(PROFILE_COMMANDS) command: (typeof PROFILE_COMMANDS)[number];
}
