import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CACHE_FILE_NAME, convertWinkJson, readCache, resolveWinkJson, type LoadedCache } from './word-vector-cache.js';
import { vocabularyWords, WordVectorModel } from './word-vector-core.js';
import { WordVectorEmbedder } from './word-vector-embedder.js';

/** The machine-wide cache the service uses (the conversion runs at most once per machine). */
const MACHINE_CACHE = path.join(os.homedir(), '.cache', 'catchment');

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);

/** Texts of every shape the embedder meets: prose, science, queries, identifiers, unknown terms, non-ASCII, long documents. */
const VARIED_TEXTS = [
  'the cat sat on the mat',
  'Quarterly revenue grew strongly in the third quarter, driven by subscriptions.',
  'Rapid phosphotransfer rates govern fidelity in two component systems',
  'PGAM1 inhibition reduces tumour growth in lung cancer cells',
  'Vitamin D supplementation and the risk of fractures in elderly women: a randomised controlled trial.',
  'How do I drop a trigger in PostgreSQL without locking the table?',
  'parseHttpRequest throws when max_retry_count is exceeded; see XMLHttpRequest.onreadystatechange',
  'git rebase --interactive HEAD~3 squashes the last three commits into one',
  'Invoice INV-2024-0001 is overdue by 30 days',
  'Die Katze schläft auf dem Sofa, während draußen der Regen fällt.',
  'naïve café résumé — déjà vu',
  'zxqvorin inhibition in tumour cells',
  'utf8 base64 sha256 ipv6 http2',
  'Immune response to the vaccine was measured by antibody titres at 28 days.',
];

describe('word-vector quantization: Int8 rows with a Float32 scale against the exact Float32 model', () => {
  let service: LoadedCache;
  let reference: LoadedCache;
  let referenceModel: WordVectorModel;
  let embedder: WordVectorEmbedder;
  let referenceDir: string;

  beforeAll(async () => {
    embedder = await WordVectorEmbedder.open({ cacheDir: MACHINE_CACHE }); // builds the machine's cache if missing
    service = (await readCache(path.join(MACHINE_CACHE, CACHE_FILE_NAME)))!;
    referenceDir = mkdtempSync(path.join(os.tmpdir(), 'catchment-vectors-float-'));
    const referenceFile = path.join(referenceDir, CACHE_FILE_NAME);
    await convertWinkJson(resolveWinkJson(), referenceFile, { precision: 'float32' });
    reference = (await readCache(referenceFile))!;
    referenceModel = new WordVectorModel(reference.layout);
  });
  afterAll(async () => {
    await embedder.close();
    rmSync(referenceDir, { recursive: true, force: true });
  });

  test('the service reads an Int8 matrix, a quarter of the reference, over the same vocabulary', () => {
    const { layout } = service;
    expect(layout.valueBytes).toBe(1);
    expect(reference.layout.valueBytes).toBe(4);
    expect(layout.count).toBe(reference.layout.count);
    const matrixBytes = (cache: LoadedCache) => cache.layout.count * cache.layout.dimensions * cache.layout.valueBytes;
    expect(matrixBytes(service) * 4).toBe(matrixBytes(reference));
    expect(layout.buffer.byteLength).toBeLessThan(reference.layout.buffer.byteLength / 3);
    const words = vocabularyWords(layout);
    expect(words.slice(0, 1000)).toEqual(vocabularyWords(reference.layout).slice(0, 1000));
  });

  test('embeddings of varied texts, through the worker thread, keep a cosine of at least 0.9999 with the reference', async () => {
    // Measured: the lowest of SciFact's 5,183 documents, 5,183 titles and 300 test queries was 0.99994.
    const long = vocabularyWords(service.layout)
      .filter((_, row) => row % 37 === 0)
      .slice(0, 400)
      .join(' ');
    const texts = [...VARIED_TEXTS, long];
    const vectors = await embedder.embed(texts);
    const expected = referenceModel.embedBatch(texts);
    const cosines = texts.map((_, i) => cosine(vectors[i]!, expected.subarray(i * 100, (i + 1) * 100)));
    expect(Math.min(...cosines)).toBeGreaterThanOrEqual(0.9999);
  });

  test('single words, where nothing averages the rounding out, keep a cosine of at least 0.999', () => {
    // Measured over every 7th word of the vocabulary (48,783): lowest 0.99976, median 0.99998.
    const words = vocabularyWords(service.layout).filter((_, row) => row % 50 === 0);
    const model = new WordVectorModel(service.layout);
    const quantized = model.embedBatch(words);
    const expected = referenceModel.embedBatch(words);
    let lowest = 1;
    for (let i = 0; i < words.length; i++) lowest = Math.min(lowest, cosine(quantized.subarray(i * 100, (i + 1) * 100), expected.subarray(i * 100, (i + 1) * 100)));
    expect(lowest).toBeGreaterThanOrEqual(0.999);
    expect(lowest).toBeLessThan(1); // the rows really are rounded: this compares two different matrices
  });
});
