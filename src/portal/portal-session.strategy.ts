import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-custom';
import { PortalRequest, readCookie, SESSION_COOKIE } from './portal-http';
import { PortalSession, PortalSessionsService } from './portal-sessions.service';

export const PORTAL_STRATEGY = 'portal-session';

/** The live session of the portal cookie (its idle clock restarted), or null; a failed lookup is thrown. */
@Injectable()
export class PortalSessionStrategy extends PassportStrategy(Strategy, PORTAL_STRATEGY) {
  constructor(private readonly sessions: PortalSessionsService) {
    super();
  }

  async validate(request: PortalRequest): Promise<PortalSession | null> {
    const token = readCookie(request.headers.cookie, SESSION_COOKIE);
    return token ? this.sessions.resume(token) : null;
  }
}
