import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module';
import { PaymentStatementController } from './payment-statement.controller';
import { PaymentStatementService } from './payment-statement.service';

/** POST /v1/statement: the merchant's payments of a period. */
@Module({ imports: [CollectionsModule], controllers: [PaymentStatementController], providers: [PaymentStatementService] })
export class PaymentStatementModule {}
