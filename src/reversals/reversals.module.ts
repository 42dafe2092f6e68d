import { Module } from '@nestjs/common';
import { PaymentsModule } from '../payments/payments.module';
import { CollectionReversalsController } from './collection-reversals.controller';
import { CollectionReversalsService } from './collection-reversals.service';

/** Collection reversals: accepted by the API, processed by the worker (refund through the rail, entry undone). */
@Module({
  imports: [PaymentsModule],
  controllers: [CollectionReversalsController],
  providers: [CollectionReversalsService],
  exports: [CollectionReversalsService],
})
export class ReversalsModule {}
