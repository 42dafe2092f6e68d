import { Module } from '@nestjs/common';
import { StatementsController } from './statements.controller';
import { StatementsService } from './statements.service';

/** Account statements: XLSX and PDF documents streamed from a server-side cursor (also downloaded from the portal). */
@Module({
  controllers: [StatementsController],
  providers: [StatementsService],
  exports: [StatementsService],
})
export class StatementsModule {}
