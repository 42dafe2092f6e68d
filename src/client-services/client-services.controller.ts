import { Body, Get, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { CurrentPrincipal, type WalletPrincipal } from '../auth/principal';
import { WalletController } from '../auth/wallet-controller.decorator';
import { readPage } from '../common/http/pagination';
import { CreateClientServiceDto } from './client-service.dto';
import { ClientServicesService } from './client-services.service';

@WalletController('client-services', 'client services')
export class ClientServicesController {
  constructor(private readonly services: ClientServicesService) {}

  @Post()
  create(@CurrentPrincipal() principal: WalletPrincipal, @Body() body: CreateClientServiceDto) {
    return this.services.create(principal, body);
  }

  @Get()
  list(@CurrentPrincipal() principal: WalletPrincipal, @Query() query: Record<string, unknown>, @Req() request: FastifyRequest) {
    return this.services.list(principal, readPage(query, request.body));
  }
}
