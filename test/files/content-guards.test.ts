import { describe, expect, it } from 'vitest';
import { ImageHeaderError, overImageLimits, readImageSize } from '../../src/files/image-header.js';
import { countXlsCells, countXlsxCells, denseSheetToCsv } from '../../src/files/sheet-guard.js';
import { fixture, makeWorkbook } from './builders.js';
import { makeBlankPng, makeCorruptPng, makePngClaiming, makePngWithBrokenHeader, makeSparseXlsx } from './hostile-builders.js';

describe('image headers', () => {
  it.each([
    ['png', 'ocr.png'],
    ['jpeg', 'ocr.jpg'],
    ['gif', 'ocr.gif'],
    ['webp', 'ocr.webp'],
  ] as const)('reads the size of a real %s', (kind, file) => {
    expect(readImageSize(kind, fixture(file))).toEqual({ width: 300, height: 70 });
  });

  it('reads what a PNG header claims without decoding it', () => {
    expect(readImageSize('png', makePngClaiming(60000, 60000))).toEqual({ width: 60000, height: 60000 });
    expect(readImageSize('png', makeBlankPng(3, 2))).toEqual({ width: 3, height: 2 });
    expect(readImageSize('png', makeCorruptPng())).toEqual({ width: 1, height: 1 });
  });

  it('reads JPEG frame headers after other segments, and VP8L and VP8X WebP headers', () => {
    // SOI, an APP1 segment of 8 bytes, fill bytes, SOF2 (progressive) 123 high, 456 wide.
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe1, 0x00, 0x08, 1, 2, 3, 4, 5, 6, 0xff, 0xff, 0xc2, 0x00, 0x11, 0x08, 0x00, 0x7b, 0x01, 0xc8, 0x03]);
    expect(readImageSize('jpeg', jpeg)).toEqual({ width: 456, height: 123 });
    const riff = (chunk: string, data: number[]) => Buffer.concat([Buffer.from('RIFF\0\0\0\0WEBP' + chunk + '\0\0\0\0', 'latin1'), Buffer.from(data), Buffer.alloc(16)]);
    // VP8L: width-1 and height-1 in 14 bits each: 1000x2000.
    const bits = 999 | (1999 << 14);
    expect(readImageSize('webp', riff('VP8L', [0x2f, bits & 0xff, (bits >> 8) & 0xff, (bits >> 16) & 0xff, (bits >>> 24) & 0xff]))).toEqual({ width: 1000, height: 2000 });
    // VP8X: canvas 70000 x 3 (24-bit minus one each).
    const w = 69999;
    expect(readImageSize('webp', riff('VP8X', [0, 0, 0, 0, w & 0xff, (w >> 8) & 0xff, w >> 16, 2, 0, 0]))).toEqual({ width: 70000, height: 3 });
  });

  it('refuses headers that are missing, truncated or zero-sized', () => {
    expect(() => readImageSize('png', makePngWithBrokenHeader())).toThrow(ImageHeaderError);
    expect(() => readImageSize('png', makePngClaiming(0, 10))).toThrow(ImageHeaderError);
    expect(() => readImageSize('jpeg', Buffer.from([0xff, 0xd8, 0xff, 0xda, 0, 2]))).toThrow(ImageHeaderError);
    expect(() => readImageSize('jpeg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00]))).toThrow(ImageHeaderError);
    expect(() => readImageSize('gif', Buffer.from('GIF89a'))).toThrow(ImageHeaderError);
    expect(() => readImageSize('webp', Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).toThrow(ImageHeaderError);
  });

  it('walks a megabyte of JPEG segments quickly (bounded loop)', () => {
    const seg = [0xff, 0xe2, 0x00, 0x04, 0, 0];
    const jpeg = Buffer.from([0xff, 0xd8, ...Array.from({ length: 200_000 }, () => seg).flat()]);
    const t = Date.now();
    expect(() => readImageSize('jpeg', jpeg)).toThrow(ImageHeaderError);
    expect(Date.now() - t).toBeLessThan(1000);
  });

  it('applies the pixel budget and the side limit', () => {
    const limits = { maxPixels: 40_000_000, maxSide: 30_000 };
    expect(overImageLimits({ width: 6000, height: 6000 }, limits)).toBeUndefined();
    expect(overImageLimits({ width: 7000, height: 7000 }, limits)).toContain('40000000 pixels');
    expect(overImageLimits({ width: 40_000, height: 10 }, limits)).toContain('30000 pixels a side');
  });
});

describe('spreadsheet guards', () => {
  it('counts the cells that exist in an XLSX, not the range it declares', () => {
    expect(countXlsxCells(makeSparseXlsx(), 1_000_000)).toBe(3);
    const rows = Array.from({ length: 50 }, (_, r) => [r, `row ${r}`]);
    expect(countXlsxCells(makeWorkbook(rows, 'xlsx'), 1_000_000)).toBe(100);
    expect(countXlsxCells(makeWorkbook(rows, 'xlsx'), 10)).toBe(11);
  });

  it('counts the cell records of an XLS', () => {
    const rows = Array.from({ length: 50 }, (_, r) => [r, `row ${r}`]);
    expect(countXlsCells(makeWorkbook(rows, 'biff8'), 1_000_000)).toBe(100);
    expect(countXlsCells(makeWorkbook(rows, 'biff8'), 10)).toBe(11);
  });

  it('writes CSV from the cells that exist, with a bound on the text', () => {
    const f = (c: { v?: unknown }) => String(c.v);
    const rows: { v: unknown; w?: string }[][] = [];
    rows[0] = [{ v: 'a' }, { v: 'b,c' }];
    rows[1_000_000] = [];
    rows[1_000_000]![5] = { v: 'far' };
    expect(denseSheetToCsv(rows, f, 1000)).toEqual({ csv: 'a,"b,c"\n,,,,,far', truncated: false });
    expect(denseSheetToCsv(rows, f, 5).truncated).toBe(true);
  });
});
