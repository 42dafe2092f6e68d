import { Module } from '@nestjs/common';
import { StatementsController } from './statements.controller';
import { StatementsService } from './statements.service';
import { AuthModule } from '../auth/auth.module';

/** Account statements: XLSX and PDF documents streamed from a server-side cursor (also downloaded from the portal). */
@Module({
  imports: [AuthModule],
  controllers: [StatementsController],
  providers: [StatementsService],
  exports: [StatementsService],
})
export class StatementsModule {}
