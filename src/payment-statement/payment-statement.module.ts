import { Module } from '@nestjs/common';
import { PaymentsModule } from '../payments/payments.module';
import { PaymentStatementController } from './payment-statement.controller';
import { PaymentStatementService } from './payment-statement.service';

/** POST /v1/statement: the merchant's payments of a period. */
@Module({ imports: [PaymentsModule], controllers: [PaymentStatementController], providers: [PaymentStatementService] })
export class PaymentStatementModule {}
