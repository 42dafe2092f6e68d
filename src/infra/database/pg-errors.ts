function sqlState(error: unknown): string | undefined {
  const e = error as { code?: string; driverError?: { code?: string } };
  return e?.code ?? e?.driverError?.code;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (sqlState(error) !== '23505') return false;
  if (!constraint) return true;
  const e = error as { constraint?: string; driverError?: { constraint?: string } };
  return (e.constraint ?? e.driverError?.constraint) === constraint;
}

/** Serialization failures and deadlocks are safe to retry: the transaction rolled back as a whole. */
export function isRetryableTransactionError(error: unknown): boolean {
  const state = sqlState(error);
  return state === '40001' || state === '40P01' || state === '55P03';
}
