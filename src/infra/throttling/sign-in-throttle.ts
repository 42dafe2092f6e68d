import { SetMetadata } from '@nestjs/common';

export const SIGN_IN_CREDENTIAL = 'paygate:sign-in-credential';

/**
 * Marks a sign-in route: attempts are limited per credential (the body field named here: username, consumer_key)
 * and per client address, so neither guessing one account's password nor spraying many accounts from one place
 * gets far. Used by wallet login and gateway auth (the portal counts its failed sign-ins itself: SignInFailures).
 */
export const SignInThrottle = (credentialField: string) => SetMetadata(SIGN_IN_CREDENTIAL, credentialField);
