import { ApiProperty } from '@nestjs/swagger';

/** POST /v1/auth (collection document §2 "Access token"); read by hand, so bad keys are a 401, never a 400. */
export class GatewayCredentials {
  @ApiProperty({ example: 'ck_7Q2K9XWZ4M', description: 'from the merchant portal or `npm run admin`' }) consumer_key: string;
  @ApiProperty({ example: 'cs_…' }) consumer_secret: string;
}

export class GatewayToken {
  @ApiProperty({ example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…', description: 'send as x-access-token (or Authorization: Bearer)' })
  access_token: string;
  @ApiProperty({ example: 3600, description: 'lifetime in seconds, as the document names it' }) expiresIn: number;
  @ApiProperty({ example: 3600, description: 'the same lifetime, in the usual OAuth spelling' }) expires_in: number;
}
