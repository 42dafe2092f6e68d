import { Module } from '@nestjs/common';
import { ClientServicesModule } from '../client-services/client-services.module';
import { AcknowledgementsController } from './acknowledgements.controller';
import { AcknowledgementsService } from './acknowledgements.service';
import { AuthorizationPageController } from './authorization-page.controller';
import { ChargesController } from './charges.controller';
import { ChargesService } from './charges.service';
import { CheckoutPageController } from './checkout-page.controller';
import { CheckoutController } from './checkout.controller';
import { CheckoutService } from './checkout.service';
import { CollectionReversalsController } from './collection-reversals.controller';
import { CollectionReversalsService } from './collection-reversals.service';
import { PaymentSettlementService } from './payment-settlement.service';
import { PaymentStatementController } from './payment-statement.controller';
import { PaymentStatementService } from './payment-statement.service';
import { PaymentsRepository } from './payments.repository';
import { SplitSettlementsService } from './split-settlements.service';

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
