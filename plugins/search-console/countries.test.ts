// Google's country codes (ISO 3166-1 alpha-3, lowercase) as Plumb writes countries (alpha-2), which
// the dashboard then names in the reader's language as its own Locations panel does.
import { describe, expect, it } from '@jest/globals';
import { shownValue } from '../../web/src/dashboard/plugin-values.ts';
import { countryCodeOf } from './countries.ts';

const utc = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC' });

describe('countryCodeOf', () => {
  it('turns Google’s alpha-3 codes into alpha-2 codes, in either case', () => {
    expect(['fra', 'usa', 'deu', 'gbr', 'jpn', 'bra', 'zaf', 'ala', 'ssd', 'xkx'].map(countryCodeOf)).toEqual(['FR', 'US', 'DE', 'GB', 'JP', 'BR', 'ZA', 'AX', 'SS', 'xkx']);
    expect(countryCodeOf('FRA')).toBe('FR');
  });

  it('knows every country of ISO 3166-1: each alpha-2 code Intl can name comes from one alpha-3 code', () => {
    const names = new Intl.DisplayNames('en', { type: 'region', fallback: 'none' });
    const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    const alpha3 = [...letters].flatMap((a) => [...letters].flatMap((b) => [...letters].map((c) => `${a}${b}${c}`.toLowerCase())));
    const mapped = alpha3.map(countryCodeOf).filter((code) => /^[A-Z]{2}$/.test(code));
    expect(mapped).toHaveLength(249);
    expect(new Set(mapped).size).toBe(249);
    expect(mapped.filter((code) => names.of(code) === undefined)).toEqual([]);
  });

  it('keeps a code outside ISO 3166-1 as Google gives it (its "zzz" for unknown)', () => {
    expect(countryCodeOf('zzz')).toBe('zzz');
    expect(countryCodeOf('')).toBe('');
  });

  it('gives codes the dashboard writes as country names, and other text as it is', () => {
    expect(shownValue(countryCodeOf('fra'), 'country', utc)).toBe(new Intl.DisplayNames(undefined, { type: 'region' }).of('FR'));
    expect(shownValue(countryCodeOf('usa'), 'country', utc)).toBe(new Intl.DisplayNames(undefined, { type: 'region' }).of('US'));
    expect(shownValue('zzz', 'country', utc)).toBe('zzz');
  });
});
