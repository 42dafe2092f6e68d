import { Body, Get, Post, Query, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { CurrentPrincipal, type WalletPrincipal } from '../auth/principal';
import { WalletController } from '../auth/wallet-controller.decorator';
import { readPage } from '../common/http/pagination';
import { ApiPageQuery, Doc, WalletErrors } from '../common/openapi/api-docs';
import { CreateClientServiceDto } from './client-service.dto';
import { ClientServiceList, CreatedClientService } from './client-service.responses';
import { ClientServicesService } from './client-services.service';

@WalletController('client-services', 'client services')
export class ClientServicesController {
  constructor(private readonly services: ClientServicesService) {}

  @Post()
  @Doc('Create a client service', 'The service money movements run under, with its amount limits and fee schedule.')
  @ApiCreatedResponse({ type: CreatedClientService })
  @WalletErrors(400, 403)
  create(@CurrentPrincipal() principal: WalletPrincipal, @Body() body: CreateClientServiceDto) {
    return this.services.create(principal, body);
  }

  @Get()
  @Doc('List client services', 'Paged by `page` and `limit`, in the query string or a JSON body.')
  @ApiPageQuery()
  @ApiOkResponse({ type: ClientServiceList })
  @WalletErrors(400)
  list(@CurrentPrincipal() principal: WalletPrincipal, @Query() query: Record<string, unknown>, @Req() request: FastifyRequest) {
    return this.services.list(principal, readPage(query, request.body));
  }
}
