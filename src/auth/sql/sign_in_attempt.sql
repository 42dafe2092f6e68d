-- One sign-in attempt against its keys (a credential and the client's address), counted before the password is
-- checked, so that parallel attempts are limited exactly as sequential ones: every key's row is locked, in key
-- order, while it is read and counted. A window of p_window_ms starts at a key's first attempt. Answers null when
-- the attempt is counted and may go on; otherwise the seconds until the fullest key's window ends, counting nothing.
-- The caller gives its attempt back when the password was right (SignInAttempts), so only failures stay counted.
CREATE OR REPLACE FUNCTION sign_in_attempt(p_keys varchar[], p_limits integer[], p_window_ms bigint)
RETURNS integer
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_window interval := p_window_ms * interval '1 millisecond';
  v_wait integer;
BEGIN
  INSERT INTO sign_in_attempts (key, attempts, window_started_at)
  SELECT k, 0, now() FROM unnest(p_keys) AS k ORDER BY k
  ON CONFLICT (key) DO NOTHING;
  PERFORM 1 FROM sign_in_attempts WHERE key = ANY (p_keys) ORDER BY key FOR UPDATE;

  UPDATE sign_in_attempts SET attempts = 0, window_started_at = now()
  WHERE key = ANY (p_keys) AND window_started_at <= now() - v_window;

  SELECT max(ceil(extract(epoch FROM a.window_started_at + v_window - now())))::integer INTO v_wait
  FROM sign_in_attempts a
  JOIN unnest(p_keys, p_limits) AS l (key, max_attempts) ON l.key = a.key
  WHERE a.attempts >= l.max_attempts;
  IF v_wait IS NOT NULL THEN
    RETURN greatest(v_wait, 1);
  END IF;

  UPDATE sign_in_attempts SET attempts = attempts + 1 WHERE key = ANY (p_keys);
  RETURN NULL;
END
$fn$;
