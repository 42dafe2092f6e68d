import { Readable } from 'node:stream';
import { signatureHeader } from '../../src/callbacks/delivery/signature';
import { verifySignature } from '../support/callback-signature';
import { everyRow, ListQuery } from '../../src/common/listing';
import { csvCell, csvLine, csvStream, textCell } from '../../src/common/csv';

describe('CSV cells', () => {
  it('quotes commas, quotes and line breaks (RFC 4180), and leaves plain text alone', () => {
    expect(csvCell('plain text')).toBe('plain text');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('cr\rhere')).toBe('"cr\rhere"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(700)).toBe('700');
    expect(csvCell(new Date('2026-11-22T10:00:00.000Z'))).toBe('2026-11-22T10:00:00.000Z');
  });

  it('guards cells a spreadsheet would run as a formula with a leading apostrophe', () => {
    expect(csvCell('=SUM(A1:A9)')).toBe("'=SUM(A1:A9)");
    expect(csvCell('+254712345678')).toBe("'+254712345678");
    expect(csvCell('-1+1')).toBe("'-1+1");
    expect(csvCell('@cmd')).toBe("'@cmd");
    expect(csvCell('\t=1')).toBe("'\t=1");
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvCell('a=b')).toBe('a=b');
  });

  it('keeps text a spreadsheet would read as a number or date (phone numbers, numeric ids) as that exact text', () => {
    expect(csvCell(textCell('254712345678'))).toBe('"=""254712345678"""');
    expect(csvCell(textCell('+254712345678'))).toBe('"=""+254712345678"""');
    expect(csvCell(textCell('0012'))).toBe('"=""0012"""');
    expect(csvCell(textCell('2026-01-02'))).toBe('"=""2026-01-02"""');
    expect(csvCell(textCell('1e5'))).toBe('"=""1e5"""');
    // Text with letters stays text by itself, and keeps the formula guard.
    expect(csvCell(textCell('INV-2026-1'))).toBe('INV-2026-1');
    expect(csvCell(textCell('=cmd|1'))).toBe("'=cmd|1");
    expect(csvCell(textCell(null))).toBe('');
    // Amounts are not text cells: they stay numbers a sheet can sum.
    expect(csvCell('999999.5000')).toBe('999999.5000');
  });

  it('lines end with CRLF; a stream is the header, then a line per row as they come', async () => {
    expect(csvLine(['a', 'b,c', 1])).toBe('a,"b,c",1\r\n');
    async function* rows() {
      yield { n: 1 };
      yield { n: 2 };
    }
    const chunks: string[] = [];
    for await (const chunk of csvStream(['n'], rows(), (r) => [r.n]) as Readable) chunks.push(String(chunk));
    expect(chunks).toEqual(['n\r\n', '1\r\n', '2\r\n']);
  });
});

describe('everyRow (exports walk the list a page at a time)', () => {
  it('asks page after page from the last row of the previous one, and stops after a short page', async () => {
    const all = Array.from({ length: 12 }, (_, i) => ({
      id: String(100 - i),
      position_at: `2026-11-22 10:00:${String(59 - i).padStart(2, '0')}+00`,
    }));
    const asked: ListQuery[] = [];
    const page = async (q: ListQuery) => {
      asked.push(q);
      const start = q.after ? all.findIndex((r) => r.id === q.after!.id) + 1 : 0;
      return all.slice(start, start + q.limit);
    };
    const seen: string[] = [];
    for await (const row of everyRow({ filter: { status: '700' } }, page, 5)) seen.push(row.id);
    expect(seen).toEqual(all.map((r) => r.id));
    expect(asked.map((q) => q.after?.id ?? null)).toEqual([null, '96', '91']);
    expect(asked.every((q) => q.limit === 5 && q.filter.status === '700')).toBe(true);
  });
});

describe('X-Signature with one or several secrets', () => {
  const body = '{"event":"successful_payment"}';
  const now = 1_800_000_000;

  it('one secret: t=…,v1=… as before', () => {
    const header = signatureHeader('whsec_one', body, now);
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(signatureHeader(['whsec_one'], body, now)).toBe(header);
    expect(verifySignature('whsec_one', body, header, 300, now * 1000)).toBe(true);
    expect(verifySignature('whsec_two', body, header, 300, now * 1000)).toBe(false);
    expect(verifySignature('whsec_one', `${body} `, header, 300, now * 1000)).toBe(false);
    expect(verifySignature('whsec_one', body, header, 300, (now + 301) * 1000)).toBe(false);
  });

  it('two secrets: one v1 each, newest first; either secret verifies, a third does not', () => {
    const header = signatureHeader(['whsec_new', 'whsec_old'], body, now);
    const [t, first, second] = header.split(',');
    expect(t).toBe(`t=${now}`);
    expect(`${t},${first}`).toBe(signatureHeader('whsec_new', body, now));
    expect(`${t},${second}`).toBe(signatureHeader('whsec_old', body, now));
    expect(verifySignature('whsec_new', body, header, 300, now * 1000)).toBe(true);
    expect(verifySignature('whsec_old', body, header, 300, now * 1000)).toBe(true);
    expect(verifySignature('whsec_other', body, header, 300, now * 1000)).toBe(false);
    expect(verifySignature('whsec_new', body, `v1=${first.slice(3)}`, 300, now * 1000)).toBe(false); // no timestamp
  });
});
