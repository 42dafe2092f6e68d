import { Module } from '@nestjs/common';
import { MpesaCallbacksController } from './mpesa-callbacks.controller';
import { MpesaCallbacksService } from './mpesa-callbacks.service';
import { RailsModule } from '../rails.module';

/** The API's operator routes for M-Pesa (the rails themselves are the global RailsModule's). */
@Module({
  imports: [RailsModule],
  controllers: [MpesaCallbacksController],
  providers: [MpesaCallbacksService],
})
export class MpesaCallbacksModule {}
