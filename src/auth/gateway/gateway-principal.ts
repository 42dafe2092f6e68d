import { createParamDecorator, ExecutionContext } from '@nestjs/common';

/** A gateway caller: an API key acting for one client. */
export interface GatewayPrincipal {
  apiKeyId: string;
  clientId: string;
  clientCode: string;
}

export const CurrentGatewayClient = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): GatewayPrincipal => ctx.switchToHttp().getRequest().gatewayPrincipal,
);

export const GATEWAY_TOKEN_TTL_SECONDS = 3600;
export const GATEWAY_AUDIENCE = 'gateway' as const;
