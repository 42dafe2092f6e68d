import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsOptional, IsString, ValidateNested } from 'class-validator';
import { codeProperty, MoneyProperty } from '../common/openapi/api-docs';
import { IsMoneyAmount, LIMITS, RequiredText } from '../common/validation/validators';
import { IsPhoneNumber } from '../payout-requests/payout.dto';
import { SERVICE_STATUS } from './airtime';

export const MAX_RECIPIENTS = 1000;

export class AirtimeRecipientDto {
  @ApiProperty({ example: '254712345678', description: 'E.164 digits, with or without a leading +' })
  @IsString()
  @IsPhoneNumber()
  phone_number: string;

  @MoneyProperty('request', { example: '50.00', description: 'positive, at most 4 decimals' })
  @IsMoneyAmount()
  amount: string | number;
}

/** POST /v1/gw/airtime/send (disbursement document §2 "Airtime"). */
export class AirtimeRequestDto {
  @ApiProperty({ example: '6f1c2a40-1d7e-4c55-9b1e-0a6f0f6d1c11', description: 'unique per client; UUID suggested' })
  @RequiredText(LIMITS.reference)
  reference: string;

  @ApiProperty({ type: [AirtimeRecipientDto], minItems: 1, maxItems: MAX_RECIPIENTS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_RECIPIENTS)
  @ValidateNested({ each: true })
  @Type(() => AirtimeRecipientDto)
  recipients: AirtimeRecipientDto[];

  @ApiPropertyOptional({ description: "the paying client service; default: the client's default airtime service" })
  @IsOptional()
  @RequiredText(LIMITS.code)
  service_code?: string;
}

export class AirtimeAcknowledgement {
  @ApiProperty({ example: '6f1c2a40-1d7e-4c55-9b1e-0a6f0f6d1c11' }) reference: string;
  @ApiProperty({ example: 720 }) response_code: number;
  @ApiProperty({ example: 'Accepted for processing' }) response_description: string;
}

export class AirtimeRecipientResult {
  @ApiProperty({ example: '254712345678' }) phone_number: string;
  @ApiProperty({ type: Number, example: 50 }) amount: number;
  @ApiProperty(codeProperty(SERVICE_STATUS, SERVICE_STATUS.SUCCESSFUL)) service_status: number;
  @ApiProperty({ example: '6f1c2a40-1d7e-4c55-9b1e-0a6f0f6d1c11', description: 'the request reference' }) external_reference: string;
  @ApiProperty({ type: String, nullable: true, example: 'SBXAIR7Q2K9X' }) provider_reference: string | null;
  @ApiProperty({ format: 'uuid' }) correlation_id: string;
  @ApiProperty({ example: 'Airtime sent' }) message: string;
}

export class AirtimeErrorBody {
  @ApiProperty({ type: String, nullable: true, example: '6f1c2a40-1d7e-4c55-9b1e-0a6f0f6d1c11' }) reference: string | null;
  @ApiProperty({ enum: [721, 722, 723], example: 721 }) response_code: number;
  @ApiProperty({ example: 'Validation Failed' }) response_description: string;
  @ApiProperty({
    enum: [
      'VALIDATION_FAILED',
      'INVALID_PHONE_NUMBER',
      'SERVICE_NOT_ALLOWED',
      'INVALID_WALLET',
      'INSUFFICIENT_BALANCE',
      'DUPLICATE_IGNORED',
      'RESOURCE_NOT_FOUND',
      'FAILED',
    ],
    example: 'VALIDATION_FAILED',
  })
  error_code: string;
  @ApiProperty({ example: 'recipients must contain at least 1 elements' }) message: string;
}
