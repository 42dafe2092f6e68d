import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module';
import { PaymentStatementController } from './payment-statement.controller';
import { PaymentStatementService } from './payment-statement.service';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';

/** POST /v1/statement: the merchant's payments of a period. */
@Module({
  imports: [CollectionsModule, GatewayAuthModule],
  controllers: [PaymentStatementController],
  providers: [PaymentStatementService],
})
export class PaymentStatementModule {}
