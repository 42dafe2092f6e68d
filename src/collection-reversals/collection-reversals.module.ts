import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module';
import { CollectionReversalsController } from './collection-reversals.controller';
import { CollectionReversalsService } from './collection-reversals.service';
import { CallbacksModule } from '../callbacks/callbacks.module';
import { LedgerModule } from '../ledger/ledger.module';
import { RailsModule } from '../rails/rails.module';
import { GatewayAuthModule } from '../auth/gateway/gateway-auth.module';

/** Collection reversals: accepted by the API, processed by the worker (refund through the rail, entry undone). */
@Module({
  imports: [CollectionsModule, CallbacksModule, LedgerModule, RailsModule, GatewayAuthModule],
  controllers: [CollectionReversalsController],
  providers: [CollectionReversalsService],
  exports: [CollectionReversalsService],
})
export class CollectionReversalsModule {}
