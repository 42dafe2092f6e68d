import { StatementPageStarts } from '../../src/payment-statement/statement-page-starts';

describe('StatementPageStarts', () => {
  const period = { clientId: 'c1', start: new Date('2025-01-01T00:00:00Z'), end: new Date('2025-01-31T23:59:59.999Z') };
  const row = (id: number) => ({ at: '2025-01-02 10:00:00.123456+00', id: String(id) });

  it('knows a page start only for the same client, period and offset', () => {
    const starts = new StatementPageStarts();
    starts.set(period, 100, row(1));
    expect(starts.get(period, 100)).toEqual(row(1));
    expect(starts.get(period, 200)).toBeNull();
    expect(starts.get({ ...period, clientId: 'c2' }, 100)).toBeNull();
    expect(starts.get({ ...period, end: new Date('2025-01-31T00:00:00Z') }, 100)).toBeNull();
  });

  it('forgets a page start ten minutes after it was last used', () => {
    const starts = new StatementPageStarts();
    starts.set(period, 100, row(1), 0);
    expect(starts.get(period, 100, 9 * 60_000)).toEqual(row(1)); // a read keeps it another ten minutes
    expect(starts.get(period, 100, 18 * 60_000)).toEqual(row(1));
    expect(starts.get(period, 100, 29 * 60_000)).toBeNull();
  });

  it('keeps at most 10,000 page starts, dropping the least recently used', () => {
    const starts = new StatementPageStarts();
    for (let offset = 1; offset <= 10_000; offset++) starts.set(period, offset, row(offset));
    expect(starts.get(period, 1)).toEqual(row(1));
    starts.set(period, 10_001, row(10_001));
    expect(starts.get(period, 2)).toBeNull();
    expect(starts.get(period, 1)).toEqual(row(1));
    expect(starts.get(period, 10_001)).toEqual(row(10_001));
  });
});
