import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsISO8601 } from 'class-validator';
import { LIMITS, RequiredText } from '../common/validation/validators';
import { DOC_TYPES } from './statement.types';
import type { DocType } from './statement.types';

/** GET /api/v1/account-statements/doc query (wallet document §4): every parameter is required. */
export class StatementQueryDto {
  @ApiProperty() @RequiredText(LIMITS.code) account_number: string;

  @ApiProperty({ description: 'ISO 8601 date or date-time (UTC when no offset is given); inclusive', example: '2025-01-01' })
  @IsISO8601({ strict: true }, { message: 'start_date must be an ISO 8601 date or date-time' })
  start_date: string;

  @ApiProperty({
    description: 'ISO 8601 date or date-time (UTC when no offset is given); inclusive — a bare date includes that whole day',
    example: '2025-01-31',
  })
  @IsISO8601({ strict: true }, { message: 'end_date must be an ISO 8601 date or date-time' })
  end_date: string;

  @ApiProperty({ enum: DOC_TYPES })
  @IsIn(DOC_TYPES, { message: 'doc_type must be one of the following values: EXCEL, PDF' })
  doc_type: DocType;
}
