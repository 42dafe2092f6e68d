import type { PortalSession } from './portal-sessions.service';
import type { SignedInFrame } from './views/pages';

const NOTICES: Record<string, string> = {
  revoked: 'The key is revoked: it gets no new tokens and its tokens are refused.',
  saved: 'Callback settings saved.',
  resent: 'Resend queued: the callback goes out again with the same X-Event-Id.',
  'time-zone': 'Time zone saved: days and times are shown in it.',
  'alert-saved': 'Low-balance alert saved.',
  'alert-cleared': 'Low-balance alert cleared.',
};

/** Every time zone the portal offers (the runtime's IANA list, and UTC, which it lists as an alias only). */
export const TIME_ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone')];

/** The frame of a signed-in page (its navigation and user), for a page of `title` under the navigation entry `active`. */
export function frame(session: PortalSession, title: string, active: string, notice?: unknown) {
  return (nonce: string): SignedInFrame => ({
    nonce,
    title,
    active,
    user: { username: session.username, clientName: session.clientName, csrfToken: session.csrfToken, timeZone: session.timeZone },
    notice: typeof notice === 'string' && NOTICES[notice] ? { kind: 'ok', text: NOTICES[notice] } : null,
  });
}
