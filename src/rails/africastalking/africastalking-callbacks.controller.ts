import { BadRequestException, Body, Controller, HttpCode, Inject, NotFoundException, Post, Req } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { RAILS_CONFIG, type RailsConfig } from '../rails-config';
import { AfricasTalkingCallbacksService } from './africastalking-callbacks.service';

/**
 * Where Africa's Talking posts airtime statuses (provider contract §11, the URL typed into its dashboard): an
 * operator route, not a merchant one, and not in the merchant OpenAPI document. A status we understand is answered
 * 200 whatever it changed.
 */
@ApiExcludeController()
@Controller('rails/africastalking')
export class AfricasTalkingCallbacksController {
  constructor(
    @Inject(RAILS_CONFIG) private readonly rails: RailsConfig,
    private readonly callbacks: AfricasTalkingCallbacksService,
  ) {}

  @Post('airtime/status')
  @HttpCode(200)
  async airtimeStatus(@Req() request: FastifyRequest, @Body() body: unknown): Promise<{ received: true }> {
    if (!this.rails.africastalking) throw new NotFoundException();
    if ((await this.callbacks.receive(request.ip, body)) === 'malformed') {
      throw new BadRequestException("not an Africa's Talking airtime status");
    }
    return { received: true };
  }
}
