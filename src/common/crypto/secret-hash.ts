import * as argon2 from '@node-rs/argon2';

/**
 * argon2id with 64 MiB, 3 passes and 4 lanes: the parameters every stored hash was made with (they are in each hash,
 * so verifying never depends on them). The library ships prebuilt binaries, so installing needs no compiler.
 */
const PARAMETERS = { memoryCost: 65_536, timeCost: 3, parallelism: 4 };

/** An argon2id hash with PARAMETERS, of no known secret: verifying against it costs what verifying a real hash costs. */
const DUMMY_HASH = '$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHRzb21lc2FsdA$2y6hPq0yG7fNQm5wR0m8bB8i1xDNh3fJf5pEwWZpK1c';

/** Hashes a secret we only ever need to verify (a password, an API key secret). */
export function hashSecret(secret: string): Promise<string> {
  return argon2.hash(secret, PARAMETERS);
}

/**
 * True when `secret` matches `hash`. Without a hash (unknown user or key) it still verifies, against a dummy hash,
 * so an unknown name and a wrong secret take the same time and a caller cannot tell them apart.
 */
export async function verifySecret(hash: string | null | undefined, secret: string): Promise<boolean> {
  const valid = await argon2.verify(hash ?? DUMMY_HASH, secret).catch(() => false);
  return valid && hash != null;
}
