// The small rules imported rows follow: file names an upload may have, dates a row may carry,
// browser and system names as GoatCounter writes them, the device class from a screen width, and
// the ids derived from a source's own session ids.
import { describe, expect, it } from '@jest/globals';
import { fileNameProblem } from '../../lib/imports/imports.ts';
import { dateProblem, derivedId } from '../../lib/imports/raw.ts';
import { deviceOf, nameAndVersion } from '../../lib/imports/sources/goatcounter.ts';

const NOW = new Date('2026-01-15T12:00:00Z');
const IMPORT = '7f1c0b7e-3d0a-4a53-9f57-6a1a3c1f0a11';

describe('fileNameProblem', () => {
  it.each([
    ['export.csv', null],
    ['goatcounter-export-2024.csv.gz', null],
    ['a'.repeat(255), null],
    ['', 'must be 1 to 255 characters'],
    ['a'.repeat(256), 'must be 1 to 255 characters'],
    ['../x.csv', 'must be a file name without a folder (no / or \\)'],
    ['dir\\x.csv', 'must be a file name without a folder (no / or \\)'],
    ['line\nbreak.csv', 'must not contain control characters'],
    ['..', 'must be a file name'],
  ])('%j → %j', (name, problem) => {
    expect(fileNameProblem(name)).toBe(problem);
  });
});

describe('dateProblem', () => {
  it('accepts 2000-01-01 and anything up to a day ahead', () => {
    expect(dateProblem(new Date('2000-01-01T00:00:00Z'), NOW)).toBeNull();
    expect(dateProblem(new Date('2026-01-16T12:00:00Z'), NOW)).toBeNull();
  });

  it('refuses a date before 2000, more than a day ahead, or unreadable, each with its reason', () => {
    expect(dateProblem(new Date('1999-12-31T23:59:59Z'), NOW)?.reason).toBe('dated before 2000');
    expect(dateProblem(new Date('2026-01-16T12:00:01Z'), NOW)?.reason).toBe('dated in the future');
    expect(dateProblem(new Date('yesterday'), NOW)?.reason).toBe('unreadable date');
  });
});

describe('nameAndVersion', () => {
  it('splits the name from its version, keeping the major (or major.minor for systems)', () => {
    expect(nameAndVersion('Firefox 133.0', false)).toEqual({ name: 'Firefox', version: '133' });
    expect(nameAndVersion('macOS 14.1', true)).toEqual({ name: 'macOS', version: '14.1' });
    expect(nameAndVersion('Windows 10', true)).toEqual({ name: 'Windows', version: '10' });
    expect(nameAndVersion('Linux', true)).toEqual({ name: 'Linux', version: '' });
    expect(nameAndVersion('', false)).toEqual({ name: '', version: '' });
  });
});

describe('deviceOf', () => {
  it('classes a width as ingest does, and a system when there is no width', () => {
    expect([deviceOf(390, ''), deviceOf(800, ''), deviceOf(1920, ''), deviceOf(0, 'iOS'), deviceOf(0, 'Linux')]).toEqual(['mobile', 'tablet', 'desktop', 'mobile', 'desktop']);
  });
});

describe('derivedId', () => {
  it('is a UInt64, the same for the same source id within an import, different across imports and kinds', () => {
    const id = derivedId(IMPORT, 'visit', 's1');
    expect(id).toMatch(/^\d+$/);
    expect(BigInt(id) < 2n ** 64n).toBe(true);
    expect(derivedId(IMPORT, 'visit', 's1')).toBe(id);
    expect(derivedId('00000000-0000-4000-8000-000000000001', 'visit', 's1')).not.toBe(id);
    expect(derivedId(IMPORT, 'visitor', 's1')).not.toBe(id);
  });
});
