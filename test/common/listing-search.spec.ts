import { countSql, ListSource, listSql } from '../../src/common/listing';

const SOURCE: ListSource = {
  select: 'p.id',
  from: 'payments p WHERE p.client_id = $1',
  columns: {
    createdAt: 'p.created_at',
    id: 'p.id',
    idType: 'bigint',
    status: 'p.payment_status',
    reference: 'p.external_reference',
    phones: ['p.payer_msisdn'],
    amounts: ['p.service_amount'],
  },
};

describe('list search (one box: reference start, phone number, exact amount)', () => {
  const where = (search: string) => listSql({ filter: { search }, after: null, limit: 51 }, SOURCE);

  it('text is a reference prefix only, its LIKE wildcards escaped', () => {
    const { text, params } = where('INV_10%');
    expect(text).toContain('(p.external_reference LIKE $2)');
    expect(params).toEqual(['INV\\_10\\%%', 51]);
  });

  it('digits also match any phone number containing them, and the exact amount; separators and + are ignored', () => {
    const { text, params } = where('+254 712');
    expect(text).toContain('(p.external_reference LIKE $2 OR p.payer_msisdn LIKE $3)');
    expect(params.slice(0, 2)).toEqual(['+254 712%', '%254712%']);
    const amount = where('1,000.50');
    expect(amount.text).toContain('(p.external_reference LIKE $2 OR p.service_amount = $3::numeric)');
    expect(amount.params.slice(0, 2)).toEqual(['1,000.50%', '1000.50']);
    expect(where('105').text).toContain('OR p.payer_msisdn LIKE $3 OR p.service_amount = $4::numeric)');
  });

  it('a newer page reads upwards from its cursor; the count says how many rows come before the page', () => {
    const newer = listSql({ filter: {}, after: null, before: { at: '2026-01-01 00:00:00+00', id: '7' }, limit: 51 }, SOURCE);
    expect(newer.text).toContain('(p.created_at, p.id) > ($2::timestamptz, $3::bigint) ORDER BY p.created_at ASC, p.id ASC');
    const count = countSql({ status: '700' }, SOURCE, { at: '2026-01-01 00:00:00+00', id: '7' });
    expect(count.text).toBe(
      'SELECT count(*)::int AS total, count(*) FILTER (WHERE (p.created_at, p.id) > ($3::timestamptz, $4::bigint))::int AS newer ' +
        'FROM payments p WHERE p.client_id = $1 AND p.payment_status::text = $2',
    );
  });
});
