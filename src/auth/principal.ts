import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';

/** Who is calling: a wallet user acting for one client. */
export interface WalletPrincipal {
  userId: string;
  clientId: string;
  clientCode: string;
}

export const CurrentPrincipal = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): WalletPrincipal => ctx.switchToHttp().getRequest().user,
);

export const IS_PUBLIC = 'isPublic';
/** Marks a route that needs no wallet token (login, health, docs). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
