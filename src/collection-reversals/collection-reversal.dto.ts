import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';
import { GATEWAY_CODES } from '../common/errors/gateway-error';
import { ValidationContext } from '../common/errors/request-validation.error';

/** Every failure echoes the reversal_reference as `reference` (empty when it is not a string). */
const ECHO_REFERENCE: ValidationContext = {
  gateway: { code: GATEWAY_CODES.VALIDATION, description: 'Validation Failed', echo: { field: 'reversal_reference', as: 'reference' } },
};
const rule = (message: string) => ({ message, context: ECHO_REFERENCE });
const REVERSAL_REFERENCE = rule('reversal_reference is required (at most 64 characters)');
const PAYMENT_REFERENCE = rule('payment_reference is required (at most 64 characters)');
const REVERSAL_REASON = rule('reversal_reason is required (at most 255 characters)');

/** POST /v1/reversals/initiate (collection document §2, §7). */
export class CollectionReversalDto {
  @ApiProperty({ maxLength: 64, example: 'REV-2024-0001' })
  @IsString(REVERSAL_REFERENCE)
  @IsNotEmpty(REVERSAL_REFERENCE)
  @MaxLength(64, REVERSAL_REFERENCE)
  reversal_reference: string;

  @ApiProperty({ maxLength: 64, description: 'the external_reference of the payment', example: 'ORDER-42' })
  @IsString(PAYMENT_REFERENCE)
  @IsNotEmpty(PAYMENT_REFERENCE)
  @MaxLength(64, PAYMENT_REFERENCE)
  payment_reference: string;

  @ApiProperty({ maxLength: 255, example: 'Customer cancelled the order' })
  @IsString(REVERSAL_REASON)
  @Matches(/\S/, REVERSAL_REASON)
  @MaxLength(255, REVERSAL_REASON)
  reversal_reason: string;
}
