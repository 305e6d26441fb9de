import { deflateSync, crc32 } from 'node:zlib';
import CFB from 'cfb';
import * as XLSX from '@e965/xlsx';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { makeDocx, makeWorkbook } from './builders.js';

/**
 * Hostile files, generated in code (issue 20): each reproduces one way an upload stopped or bloated the service.
 */

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function ihdr(width: number, height: number, colorType = 0): Buffer {
  const h = Buffer.alloc(13);
  h.writeUInt32BE(width, 0);
  h.writeUInt32BE(height, 4);
  h[8] = 8; // bit depth
  h[9] = colorType; // 0 grey, 2 RGB
  return chunk('IHDR', h);
}

/** A real greyscale PNG of the given size, all white: it compresses to almost nothing whatever its size. */
export function makeBlankPng(width: number, height: number): Buffer {
  const row = Buffer.alloc(width + 1, 0xff);
  row[0] = 0; // filter: none
  const raw = Buffer.alloc(row.length * height);
  for (let y = 0; y < height; y++) row.copy(raw, y * row.length);
  return Buffer.concat([PNG_SIGNATURE, ihdr(width, height), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

/** 73 bytes: a valid signature and IHDR (1x1), then image data that is not zlib at all. */
export function makeCorruptPng(): Buffer {
  const png = Buffer.concat([PNG_SIGNATURE, ihdr(1, 1), chunk('IDAT', Buffer.alloc(28, 0xab))]);
  if (png.length !== 73) throw new Error(`corrupt PNG is ${png.length} bytes`);
  return png;
}

/** A PNG whose header claims width x height over a few bytes of data (the 3.6 MB 60000x60000 PNG, minus the bulk). */
export function makePngClaiming(width: number, height: number): Buffer {
  return Buffer.concat([PNG_SIGNATURE, ihdr(width, height, 2), chunk('IDAT', deflateSync(Buffer.alloc(1024))), chunk('IEND', Buffer.alloc(0))]);
}

/** A PNG signature followed by garbage where IHDR should be. */
export function makePngWithBrokenHeader(): Buffer {
  return Buffer.concat([PNG_SIGNATURE, Buffer.alloc(40, 0x41)]);
}

/** A one-sheet XLSX with two cells whose sheet declares `<dimension ref="A1:XFD1048576">`, and a cell at XFD1048576. */
export function makeSparseXlsx(): Buffer {
  const book = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([['SPARSE', 'TAPIR']]), 'Huge');
  const files = unzipSync(new Uint8Array(XLSX.write(book, { bookType: 'xlsx', type: 'buffer' }) as Buffer));
  // Patched as text: the writer itself walks the declared range, so it cannot be asked to write this sheet.
  const xml = strFromU8(files['xl/worksheets/sheet1.xml']!)
    .replace(/<dimension ref="[^"]*"\/>/, '<dimension ref="A1:XFD1048576"/>')
    .replace('</sheetData>', '<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>FAR</t></is></c></row></sheetData>');
  if (!xml.includes('<dimension ref="A1:XFD1048576"/>') || !xml.includes('XFD1048576"')) throw new Error('the sparse sheet was not patched');
  files['xl/worksheets/sheet1.xml'] = strToU8(xml);
  return Buffer.from(zipSync(files));
}

/** An XLSX with `cells` real cells (rows of ten). */
export function makeXlsxWithCells(cells: number): Buffer {
  const rows = Array.from({ length: Math.ceil(cells / 10) }, (_, r) => Array.from({ length: 10 }, (_, c) => r * 10 + c));
  return makeWorkbook(rows, 'xlsx');
}

/** A DOCX whose document.xml inflates to `mb` MiB of paragraphs (within the archive limits), from a small archive. */
export function makeHugeDocx(mb: number): Buffer {
  const files = unzipSync(new Uint8Array(makeDocx('x')));
  const para = '<w:p><w:r><w:t>lorem ipsum dolor</w:t></w:r></w:p>';
  const body = para.repeat(Math.ceil((mb * 1024 * 1024) / para.length));
  files['word/document.xml'] = strToU8(
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`,
  );
  return Buffer.from(zipSync(files, { level: 9 }));
}

/** `%PDF-` and then noise: the type check passes, the reader cannot make sense of it. */
export function makeGarbagePdf(): Buffer {
  const noise = Buffer.alloc(4096);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 7919 + 13) & 0xff;
  return Buffer.concat([Buffer.from('%PDF-1.7\n'), noise]);
}

/** An XLS (BIFF8) whose DIMENSIONS record declares every row and column BIFF8 allows (65536 x 256) around two rows. */
export function makeSparseXls(): Buffer {
  const container = CFB.read(makeWorkbook([['SPARSE', 'OKAPI'], [1, 2]], 'biff8'), { type: 'buffer' });
  const stream = CFB.find(container, 'Workbook')!;
  const records = Buffer.from(stream.content as Uint8Array);
  let patched = 0;
  for (let i = 0; i + 4 <= records.length; i += 4 + records.readUInt16LE(i + 2)) {
    if (records.readUInt16LE(i) !== 0x0200) continue;
    records.writeUInt32LE(0, i + 4); // first row
    records.writeUInt32LE(65536, i + 8); // last row + 1
    records.writeUInt16LE(0, i + 12); // first column
    records.writeUInt16LE(256, i + 14); // last column + 1
    patched++;
  }
  if (!patched) throw new Error('no DIMENSIONS record to patch');
  stream.content = records as unknown as number[];
  return Buffer.from(CFB.write(container, { type: 'buffer' }) as Uint8Array);
}
