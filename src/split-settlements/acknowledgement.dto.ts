import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';

const PAYMENT_ID = { message: 'payment_id is required' };
const STATUS = { message: 'status must be SUCCESSFUL or FAILED' };
const NARRATION = { message: 'narration must be a string of at most 255 characters' };

/** POST /transactions/acknowledge (collection document §2, split settlements). */
export class AcknowledgementDto {
  /** The document types payment_id as a string; the integer our own responses show is accepted too. */
  @ApiProperty({ example: '1234' })
  @Transform(({ value }) => (Number.isSafeInteger(value) ? String(value) : value))
  @IsString(PAYMENT_ID)
  @Matches(/^\d{1,18}$/, PAYMENT_ID)
  payment_id: string;

  @ApiProperty({ example: 'SUCCESSFUL', enum: ['SUCCESSFUL', 'FAILED'] }) @IsIn(['SUCCESSFUL', 'FAILED'], STATUS) status:
    'SUCCESSFUL' | 'FAILED';

  /** Optional, but null is not a narration. */
  @ApiPropertyOptional({ maxLength: 255, example: 'Order delivered' })
  @ValidateIf((body: AcknowledgementDto) => body.narration !== undefined)
  @IsString(NARRATION)
  @MaxLength(255, NARRATION)
  narration?: string;
}

/** Service confirmation response (collection document §2 "Split settlement"). */
export class AcknowledgementResult {
  @ApiProperty({ example: '1042' }) payment_id: string;
  @ApiProperty({ example: 'Split settlements distributed to 2 partner account(s)' }) message: string;
}
