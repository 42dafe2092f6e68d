import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module';
import { AcknowledgementsController } from './acknowledgements.controller';
import { AcknowledgementsService } from './acknowledgements.service';
import { SplitSettlementsService } from './split-settlements.service';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';

/**
 * Split settlements: checked when a charge or checkout is accepted (exported for them), paid out of the
 * settlement wallet when the merchant acknowledges the payment.
 */
@Module({
  imports: [CollectionsModule, GatewayAuthModule],
  controllers: [AcknowledgementsController],
  providers: [SplitSettlementsService, AcknowledgementsService],
  exports: [SplitSettlementsService],
})
export class SplitSettlementsModule {}
