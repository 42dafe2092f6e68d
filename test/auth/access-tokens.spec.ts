import { JwtService } from '@nestjs/jwt';
import { AccessTokens, MAX_REMEMBERED_TOKENS } from '../../src/auth/access-tokens';

/** Remembering verified tokens must never accept a token that verifying it afresh would refuse. */
describe('AccessTokens (verified tokens remembered until they expire)', () => {
  const jwt = new JwtService({ secret: 'access-tokens-test-secret-access-tokens-test-secret' });
  const now = Date.UTC(2026, 10, 24, 12, 0, 0);
  let tokens: AccessTokens;

  beforeEach(() => {
    jest.useFakeTimers({ now, doNotFake: ['nextTick', 'setImmediate'] });
    tokens = new AccessTokens(jwt);
  });
  afterEach(() => jest.useRealTimers());

  const sign = (claims: object, audience: string, exp = now / 1000 + 60) => jwt.sign({ ...claims, exp }, { audience });

  it('answers the claims, and the same claims again without verifying (until the token expires)', () => {
    const token = sign({ sub: 'u1' }, 'wallet');
    const verify = jest.spyOn(jwt, 'verify');
    expect(tokens.claims(token, 'wallet')).toMatchObject({ sub: 'u1', aud: 'wallet' });
    expect(tokens.claims(token, 'wallet')).toMatchObject({ sub: 'u1' });
    expect(verify).toHaveBeenCalledTimes(1);
    verify.mockRestore();
  });

  it('a remembered token is refused from its exp second on, exactly when jsonwebtoken refuses it', () => {
    const token = sign({ sub: 'u1' }, 'wallet', now / 1000 + 2);
    expect(tokens.claims(token, 'wallet')).not.toBeNull();
    jest.setSystemTime(now + 1999);
    expect(tokens.claims(token, 'wallet')).not.toBeNull();
    expect(() => jwt.verify(token, { audience: 'wallet' })).not.toThrow();
    jest.setSystemTime(now + 2000);
    expect(() => jwt.verify(token, { audience: 'wallet' })).toThrow('jwt expired');
    expect(tokens.claims(token, 'wallet')).toBeNull();
  });

  it('a token remembered for one audience is still refused for the other', () => {
    const wallet = sign({ sub: 'u1' }, 'wallet');
    const gateway = sign({ sub: 'k1' }, 'gateway');
    expect(tokens.claims(wallet, 'wallet')).not.toBeNull();
    expect(tokens.claims(gateway, 'gateway')).not.toBeNull();
    expect(tokens.claims(wallet, 'gateway')).toBeNull();
    expect(tokens.claims(gateway, 'wallet')).toBeNull();
  });

  it('forged, tampered, other-algorithm and garbage tokens are refused, every time', () => {
    const forged = new JwtService({ secret: 'another-secret-another-secret-another-secret' }).sign({ sub: 'u1' }, { audience: 'wallet' });
    const good = sign({ sub: 'u1' }, 'wallet');
    const tampered = `${good.slice(0, -2)}${good.endsWith('AA') ? 'BB' : 'AA'}`;
    const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from('{"sub":"u1","aud":"wallet"}').toString('base64url')}.`;
    for (const token of [forged, tampered, unsigned, 'not-a-jwt', '']) {
      expect(tokens.claims(token, 'wallet')).toBeNull();
      expect(tokens.claims(token, 'wallet')).toBeNull();
    }
  });

  it(`keeps at most ${MAX_REMEMBERED_TOKENS} tokens per audience, forgetting the least recently presented`, () => {
    const first = sign({ sub: 'first' }, 'gateway');
    const second = sign({ sub: 'second' }, 'gateway');
    tokens.claims(first, 'gateway');
    tokens.claims(second, 'gateway');
    tokens.claims(first, 'gateway'); // now the most recent
    for (let i = 0; i < MAX_REMEMBERED_TOKENS - 1; i++) tokens.claims(sign({ sub: `k${i}` }, 'gateway'), 'gateway');
    const verify = jest.spyOn(jwt, 'verify');
    expect(tokens.claims(first, 'gateway')).not.toBeNull();
    expect(verify).not.toHaveBeenCalled();
    expect(tokens.claims(second, 'gateway')).not.toBeNull();
    expect(verify).toHaveBeenCalledTimes(1);
    verify.mockRestore();
  });
});
