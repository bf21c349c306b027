// Writes a brotli (.br, quality 11) and a gzip (.gz, level 9) copy next to every compressible file of dist/,
// once at build time, so the server never compresses on the fly: web/embed.go picks the copy the browser
// accepts (br > gzip > the file). A copy that would not be smaller is not written. Node's zlib only: no
// dependency.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const COMPRESSIBLE = new Set(['.js', '.mjs', '.css', '.html', '.svg', '.json', '.txt', '.map', '.xml', '.ico', '.wasm']);

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* walk(p);
    else yield p;
  }
}

let raw = 0;
let br = 0;
let gz = 0;
let n = 0;
for (const file of [...walk(dist)]) {
  if (!COMPRESSIBLE.has(extname(file))) continue;
  const data = readFileSync(file);
  const b = brotliCompressSync(data, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 11,
      [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  });
  const g = gzipSync(data, { level: 9 });
  if (b.length < data.length) writeFileSync(`${file}.br`, b);
  if (g.length < data.length) writeFileSync(`${file}.gz`, g);
  raw += data.length;
  br += Math.min(b.length, data.length);
  gz += Math.min(g.length, data.length);
  n++;
  if (process.env.COMPRESS_VERBOSE) console.log(relative(dist, file), data.length, b.length, g.length);
}
const kb = (x) => `${(x / 1024).toFixed(1)} KB`;
console.log(`compressed ${n} files: ${kb(raw)} → brotli ${kb(br)}, gzip ${kb(gz)}`);
