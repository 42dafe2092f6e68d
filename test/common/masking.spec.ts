import { maskNumber } from '../../src/common/masking';

describe('maskNumber (recipients on statements)', () => {
  it('keeps the first four and last three characters of a phone or account number, starring the rest', () => {
    expect(maskNumber('254712345678')).toBe('2547*****678');
    expect(maskNumber('+254712345678')).toBe('+254******678');
    expect(maskNumber('1234567890')).toBe('1234***890');
  });

  it('keeps only the last three characters of a short number, and shows nothing of a tiny one', () => {
    expect(maskNumber('12345678')).toBe('*****678');
    expect(maskNumber('4321')).toBe('*321');
    expect(maskNumber('123')).toBe('***');
    expect(maskNumber('')).toBe('');
  });
});
