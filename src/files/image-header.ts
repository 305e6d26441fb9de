/**
 * Image dimensions read from the header alone, so an image too large to decode is refused before any decoder
 * allocates its pixels (a 3.6 MB PNG can declare 60000x60000: 14 GB of RGBA). Every loop here is bounded by the
 * byte length and advances at least one byte per step: hostile headers cost microseconds.
 */

export type ImageKind = 'png' | 'jpeg' | 'gif' | 'webp';

export interface ImageSize {
  width: number;
  height: number;
}

/** The header is missing, truncated or contradicts itself: no decoder should be trusted with the rest. */
export class ImageHeaderError extends Error {}

export interface ImageLimits {
  /** width x height. */
  maxPixels: number;
  /** Either side. */
  maxSide: number;
}

export const isImageKind = (kind: string): kind is ImageKind => kind === 'png' || kind === 'jpeg' || kind === 'gif' || kind === 'webp';

/** Width and height as the header declares them; throws ImageHeaderError when there is no readable header. */
export function readImageSize(kind: ImageKind, bytes: Uint8Array): ImageSize {
  const size = READERS[kind](bytes);
  if (!size || !(size.width > 0) || !(size.height > 0)) throw new ImageHeaderError(`no valid ${kind.toUpperCase()} header`);
  return size;
}

/** Why an image of this size is refused, or undefined when it is within the limits. */
export function overImageLimits(size: ImageSize, limits: ImageLimits): string | undefined {
  if (size.width > limits.maxSide || size.height > limits.maxSide) {
    return `${size.width}x${size.height} pixels, over the limit of ${limits.maxSide} pixels a side`;
  }
  if (size.width * size.height > limits.maxPixels) {
    return `${size.width}x${size.height} pixels, over the limit of ${limits.maxPixels} pixels`;
  }
  return undefined;
}

const be16 = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!;
const le16 = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8);
const be32 = (b: Uint8Array, i: number) => ((b[i]! << 24) >>> 0) + (b[i + 1]! << 16) + (b[i + 2]! << 8) + b[i + 3]!;
const le24 = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16);
const ascii = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n));

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** PNG: the first chunk must be a 13-byte IHDR (width, height as 32-bit big-endian). */
function png(b: Uint8Array): ImageSize | undefined {
  if (b.length < 33 || PNG_SIGNATURE.some((v, i) => b[i] !== v)) return undefined;
  if (be32(b, 8) !== 13 || ascii(b, 12, 4) !== 'IHDR') return undefined;
  const width = be32(b, 16);
  const height = be32(b, 20);
  // The PNG specification caps both at 2^31 - 1; larger values are corruption, not a big image.
  if (width > 0x7fffffff || height > 0x7fffffff) return undefined;
  return { width, height };
}

/** JPEG: walks the marker segments up to the first start-of-frame (SOF0-15 except DHT, JPG and DAC). */
function jpeg(b: Uint8Array): ImageSize | undefined {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  let i = 2;
  while (i + 3 < b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    // Markers without a length field.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      i += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return undefined; // end of image or scan data before any frame header
    const length = be16(b, i + 2);
    if (length < 2) return undefined;
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isSof) {
      if (i + 9 > b.length || length < 7) return undefined;
      return { height: be16(b, i + 5), width: be16(b, i + 7) };
    }
    i += 2 + length;
  }
  return undefined;
}

/** GIF: the logical screen size (16-bit little-endian each). */
function gif(b: Uint8Array): ImageSize | undefined {
  if (b.length < 10) return undefined;
  const sig = ascii(b, 0, 6);
  if (sig !== 'GIF87a' && sig !== 'GIF89a') return undefined;
  return { width: le16(b, 6), height: le16(b, 8) };
}

/** WebP: the first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended, with the canvas size). */
function webp(b: Uint8Array): ImageSize | undefined {
  if (b.length < 30 || ascii(b, 0, 4) !== 'RIFF' || ascii(b, 8, 4) !== 'WEBP') return undefined;
  const chunk = ascii(b, 12, 4);
  if (chunk === 'VP8 ') {
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return undefined;
    return { width: le16(b, 26) & 0x3fff, height: le16(b, 28) & 0x3fff };
  }
  if (chunk === 'VP8L') {
    if (b[20] !== 0x2f) return undefined;
    const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') return { width: le24(b, 24) + 1, height: le24(b, 27) + 1 };
  return undefined;
}

const READERS: Record<ImageKind, (b: Uint8Array) => ImageSize | undefined> = { png, jpeg, gif, webp };
