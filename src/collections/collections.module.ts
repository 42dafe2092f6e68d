import { Module } from '@nestjs/common';
import { ClientServicesModule } from '../client-services/client-services.module';
import { AcknowledgementsController } from '../settlements/acknowledgements.controller';
import { AcknowledgementsService } from '../settlements/acknowledgements.service';
import { AuthorizationPageController } from '../charges/authorization-page.controller';
import { ChargesController } from '../charges/charges.controller';
import { ChargesService } from '../charges/charges.service';
import { CheckoutPageController } from '../checkout/checkout-page.controller';
import { CheckoutController } from '../checkout/checkout.controller';
import { CheckoutService } from '../checkout/checkout.service';
import { CollectionReversalsController } from '../reversals/collection-reversals.controller';
import { CollectionReversalsService } from '../reversals/collection-reversals.service';
import { PaymentSettlementService } from '../payments/payment-settlement.service';
import { PaymentStatementController } from '../payment-statement/payment-statement.controller';
import { PaymentStatementService } from '../payment-statement/payment-statement.service';
import { PaymentsRepository } from '../payments/payments.repository';
import { SplitSettlementsService } from '../settlements/split-settlements.service';

/** The collection gateway: direct charges, hosted checkout, split settlements, reversals, payment statement. */
@Module({
  imports: [ClientServicesModule],
  controllers: [
    ChargesController,
    AuthorizationPageController,
    CheckoutController,
    CheckoutPageController,
    AcknowledgementsController,
    CollectionReversalsController,
    PaymentStatementController,
  ],
  providers: [
    ChargesService,
    CheckoutService,
    PaymentSettlementService,
    SplitSettlementsService,
    AcknowledgementsService,
    CollectionReversalsService,
    PaymentStatementService,
    PaymentsRepository,
  ],
  exports: [PaymentSettlementService, CheckoutService, CollectionReversalsService],
})
export class CollectionsModule {}
