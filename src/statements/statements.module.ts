import { Module } from '@nestjs/common';
import { StatementsController } from './statements.controller';
import { StatementsService } from './statements.service';

/** Account statements: XLSX and PDF documents streamed from a server-side cursor. */
@Module({
  controllers: [StatementsController],
  providers: [StatementsService],
})
export class StatementsModule {}
