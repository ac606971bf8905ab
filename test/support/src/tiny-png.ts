/**
 * A sandbox program that draws a small PNG (a `size` x `size` RGB square of one colour) from scratch:
 * chunks with their CRC-32, image data in a zlib stream of stored (uncompressed) deflate blocks with
 * its Adler-32. Plain TypeScript, no library: it runs in the sandbox as a model's program would.
 * The program ends with `output.image(png, 'image/png')` and `output.file('square.png', png, 'image/png')`.
 * @see https://www.w3.org/TR/png-3/#5Chunk-layout
 */
export const DRAW_PNG_PROGRAM = `
const size = 4;
const crcTable: number[] = [];
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  crcTable[n] = c >>> 0;
}
const crc32 = (bytes: number[]) => {
  let c = 0xffffffff;
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const u32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const chunk = (type: string, data: number[]) => {
  const typed = [...type].map((ch) => ch.charCodeAt(0)).concat(data);
  return [...u32(data.length), ...typed, ...u32(crc32(typed))];
};
const raw: number[] = [];
for (let y = 0; y < size; y++) {
  raw.push(0);
  for (let x = 0; x < size; x++) raw.push(255, 64, 0);
}
let a = 1, b = 0;
for (const byte of raw) { a = (a + byte) % 65521; b = (b + a) % 65521; }
const zlib = [0x78, 0x01, 1, raw.length & 255, raw.length >>> 8, ~raw.length & 255, (~raw.length >>> 8) & 255, ...raw, ...u32(((b << 16) | a) >>> 0)];
const png = new Uint8Array([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a,
  ...chunk('IHDR', [...u32(size), ...u32(size), 8, 2, 0, 0, 0]),
  ...chunk('IDAT', zlib),
  ...chunk('IEND', []),
]);
await output.image(png, 'image/png');
await output.file('square.png', png, 'image/png');
`;

/** The eight bytes every PNG starts with. */
export const PNG_SIGNATURE = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
