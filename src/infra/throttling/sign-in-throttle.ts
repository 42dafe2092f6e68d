import { SetMetadata } from '@nestjs/common';

export const SIGN_IN_CREDENTIAL = 'paygate:sign-in-credential';

/**
 * Marks a sign-in route: attempts are limited per credential (the body field named here: username, consumer_key)
 * and per client address, so neither guessing one account's password nor spraying many accounts from one place
 * gets far. Used by wallet login, gateway auth, and the portal sign-in.
 */
export const SignInThrottle = (credentialField: string) => SetMetadata(SIGN_IN_CREDENTIAL, credentialField);
