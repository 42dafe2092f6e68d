import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module';
import { CollectionReversalsController } from './collection-reversals.controller';
import { CollectionReversalsService } from './collection-reversals.service';

/** Collection reversals: accepted by the API, processed by the worker (refund through the rail, entry undone). */
@Module({
  imports: [CollectionsModule],
  controllers: [CollectionReversalsController],
  providers: [CollectionReversalsService],
  exports: [CollectionReversalsService],
})
export class CollectionReversalsModule {}
