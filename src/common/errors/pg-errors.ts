export function sqlState(error: unknown): string | undefined {
  const e = error as { code?: string; driverError?: { code?: string } };
  return e?.code ?? e?.driverError?.code;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== '23505') return false;
  if (!constraint) return true;
  const e = error as {
    constraint?: string;
    driverError?: { constraint?: string };
  };
  return (e.constraint ?? e.driverError?.constraint) === constraint;
}

/** Serialization failures and deadlocks are safe to retry: the transaction rolled back as a whole. */
export function isRetryableTransactionError(error: unknown): boolean {
  const state = sqlState(error);
  return state === '40001' || state === '40P01' || state === '55P03';
}

/** Socket-level codes of a database that cannot be reached. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * True when Postgres is away rather than the request wrong: refused or dropped connections, a server shutting
 * down or starting (57P01-57P03), connection exceptions (class 08), and a pool that timed out waiting for one.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const state = sqlState(error);
  if (state !== undefined && (UNREACHABLE.has(state) || /^57P0[123]$/.test(state) || /^08/.test(state))) return true;
  const message = (error as { message?: unknown })?.message;
  return (
    typeof message === 'string' &&
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connect ECONNREFUSED/.test(
      message,
    )
  );
}
