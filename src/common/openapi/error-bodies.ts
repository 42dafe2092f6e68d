import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** Wallet service errors (wallet document §7): `message` is a list for validation failures, a sentence otherwise. */
export class WalletErrorBody {
  @ApiProperty({ example: 400, description: 'the HTTP status' }) status: number;
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    example: ['amount must be a positive decimal with at most 4 places'],
  })
  message: string | string[];
  @ApiProperty({ enum: ['HttpException'], example: 'HttpException' }) code: string;
}

/** Gateway errors (collection document §7): `{status_code, status_description, message}`. */
export class GatewayErrorBody {
  @ApiProperty({ example: 172, description: '172 validation failure, 120 not found, 110/109 invalid/missing msisdn, 115 invalid currency' })
  status_code: number;
  @ApiProperty({ example: 'Validation Failed' }) status_description: string;
  @ApiProperty({ example: 'amount must be a positive number' }) message: string;
}

/** Collection reversal errors: the gateway body plus the reversal reference (collection document §7). */
export class ReversalErrorBody extends GatewayErrorBody {
  @ApiPropertyOptional({ example: 'REV-2024-0001', description: 'the reversal_reference of the request, on refusals after validation' })
  reference?: string;
}

/** A missing, expired, forged or revoked gateway token, or wrong consumer keys (collection document §5). */
export class GatewayUnauthorizedBody {
  @ApiProperty({ example: 401 }) statusCode: number;
  @ApiProperty({ example: 'Invalid Authentication Credentials' }) message: string;
  @ApiProperty({ example: 'Unauthorized' }) error: string;
}

/** Payout, IMT and B2B errors (disbursement document §7). */
export class PayoutErrorBody {
  @ApiPropertyOptional({ example: 'PAY-2024-0001', description: 'the request reference, where known' }) payout_reference?: string;
  @ApiProperty({ enum: [721, 722, 723], example: 721, description: '721 rejected, 722 duplicate ignored, 723 not found' })
  response_code: number;
  @ApiProperty({ example: 'Insufficient balance' }) response_description: string;
  @ApiProperty({
    enum: [
      'INSUFFICIENT_BALANCE',
      'SERVICE_NOT_ALLOWED',
      'INVALID_DESTINATION_TYPE',
      'INVALID_PHONE_NUMBER',
      'INVALID_PAYMENT_METHOD',
      'INVALID_WALLET',
      'RESOURCE_NOT_FOUND',
      'DUPLICATE_IGNORED',
      'VALIDATION_FAILED',
    ],
    example: 'INSUFFICIENT_BALANCE',
  })
  error_code: string;
  @ApiPropertyOptional({ example: 'available balance 100.0000 is less than 250.0000', description: 'detail, when worth saying' })
  message?: string;
}

/** POST /v1/statement validation errors (collection document §7 rule 3). */
export class PaymentStatementErrorBody {
  @ApiProperty({ example: 400 }) response_code: number;
  @ApiProperty({ example: 'start_date must be an ISO 8601 date' }) response_description: string;
  @ApiProperty({ example: 'INVALID_REQUEST' }) error_code: string;
}

/** The payer's hosted checkout endpoints (/checkout/…): Nest's own body, with one message a page can show. */
export class HostedPageErrorBody {
  @ApiProperty({ example: 409 }) statusCode: number;
  @ApiProperty({ example: 'This checkout can no longer be paid' }) message: string;
  @ApiProperty({ example: 'Conflict' }) error: string;
}
