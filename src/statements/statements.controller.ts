import { Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal } from '../auth/principal';
import type { WalletPrincipal } from '../auth/principal';
import { WalletController } from '../auth/wallet-controller.decorator';
import { Doc, WalletErrors } from '../common/openapi/api-docs';
import { StatementQueryDto } from './statement-query.dto';
import { STATEMENT_CONTENT_TYPES } from './statement.types';
import { StatementsService } from './statements.service';

@WalletController('account-statements', 'statements')
export class StatementsController {
  constructor(private readonly statements: StatementsService) {}

  /**
   * Streams the wallet's statement for the period as XLSX or PDF (wallet document §4 note 2, provider contract
   * §4). Validation, an unknown wallet and an empty period are answered as JSON errors before the download starts.
   */
  @Get('doc')
  @Doc('Download a wallet statement', 'XLSX or PDF (doc_type) for a period, streamed as an attachment; errors are JSON.')
  @ApiOkResponse({
    description: 'the statement file (Content-Disposition: attachment)',
    content: Object.fromEntries(
      Object.values(STATEMENT_CONTENT_TYPES).map(({ contentType }) => [contentType, { schema: { type: 'string', format: 'binary' } }]),
    ),
  })
  @WalletErrors({ 400: 'invalid parameters, or no transactions in the period', 404: 'no wallet of the caller has this account number' })
  async download(@CurrentPrincipal() principal: WalletPrincipal, @Query() query: StatementQueryDto, @Res() reply: FastifyReply) {
    const statement = await this.statements.open(principal.clientId, query);
    return this.statements.send(reply, statement, query.doc_type);
  }
}
