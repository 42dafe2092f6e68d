import { Module } from '@nestjs/common';
import { AfricasTalkingCallbacksController } from './africastalking-callbacks.controller';
import { AfricasTalkingCallbacksService } from './africastalking-callbacks.service';
import { RailsModule } from '../rails.module';

/** The API's operator route for Africa's Talking (the rail itself is the global RailsModule's). */
@Module({
  imports: [RailsModule],
  controllers: [AfricasTalkingCallbacksController],
  providers: [AfricasTalkingCallbacksService],
})
export class AfricasTalkingCallbacksModule {}
