import {
  Body,
  Controller,
  ForbiddenException,
  HttpCode,
  Inject,
  NotFoundException,
  BadRequestException,
  Param,
  Post,
  Req,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { RAILS_CONFIG, type RailsConfig } from '../rails-config';
import { MpesaCallbacksService } from './mpesa-callbacks.service';

/** Daraja's answer shape: what it expects back from a callback URL. */
const ACCEPTED = { ResultCode: 0, ResultDesc: 'Accepted' };

/**
 * Where Daraja calls us back (`/rails/mpesa/<token>/<kind>/<our request id>`): operator routes, not merchant ones,
 * and not in the merchant OpenAPI document. A callback we understand is answered 200 whatever it changed.
 */
@ApiExcludeController()
@Controller('rails/mpesa')
export class MpesaCallbacksController {
  constructor(
    @Inject(RAILS_CONFIG) private readonly rails: RailsConfig,
    private readonly callbacks: MpesaCallbacksService,
  ) {}

  @Post(':token/:kind/:requestId')
  @HttpCode(200)
  async receive(
    @Param('token') token: string,
    @Param('kind') kind: string,
    @Param('requestId') requestId: string,
    @Req() request: FastifyRequest,
    @Body() body: unknown,
  ): Promise<typeof ACCEPTED> {
    if (!this.rails.mpesa) throw new NotFoundException();
    const verdict = await this.callbacks.receive(token, kind, requestId, request.ip, body);
    if (verdict === 'forbidden') throw new ForbiddenException();
    if (verdict === 'unknown') throw new NotFoundException();
    if (verdict === 'malformed') throw new BadRequestException('not a Daraja callback');
    return ACCEPTED;
  }
}
