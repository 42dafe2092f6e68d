import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module';
import { AcknowledgementsController } from './acknowledgements.controller';
import { AcknowledgementsService } from './acknowledgements.service';
import { SplitSettlementsService } from './split-settlements.service';

/**
 * Split settlements: checked when a charge or checkout is accepted (exported for them), paid out of the
 * settlement wallet when the merchant acknowledges the payment.
 */
@Module({
  imports: [CollectionsModule],
  controllers: [AcknowledgementsController],
  providers: [SplitSettlementsService, AcknowledgementsService],
  exports: [SplitSettlementsService],
})
export class SplitSettlementsModule {}
