import { Module } from '@nestjs/common';
import { AfricasTalkingCallbacksController } from './africastalking-callbacks.controller';
import { AfricasTalkingCallbacksService } from './africastalking-callbacks.service';

/** The API's operator route for Africa's Talking (the rail itself is the global RailsModule's). */
@Module({
  controllers: [AfricasTalkingCallbacksController],
  providers: [AfricasTalkingCallbacksService],
})
export class AfricasTalkingCallbacksModule {}
