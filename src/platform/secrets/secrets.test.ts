import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hashSecret, resolveEncryptionKey, SecretBox } from './secrets.js';

describe('SecretBox', () => {
  const box = new SecretBox(Buffer.alloc(32, 1));

  test('seals to ciphertext that does not contain the secret and opens back to it', () => {
    const sealed = box.seal('super-secret-value');
    expect(sealed).not.toContain('super-secret-value');
    expect(sealed).not.toBe(box.seal('super-secret-value')); // fresh IV each time
    expect(box.open(sealed)).toBe('super-secret-value');
  });

  test('refuses tampered ciphertext and a wrong key', () => {
    const sealed = box.seal('value');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('other').toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
    expect(() => new SecretBox(Buffer.alloc(32, 2)).open(sealed)).toThrow();
  });
});

test('hashSecret is a stable SHA-256 hex digest', () => {
  expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('without a configured key, one is generated once into the data directory with mode 0600 and reused', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'catchment-key-'));
  const first = resolveEncryptionKey(undefined, dir);
  const second = resolveEncryptionKey(undefined, dir);
  expect(first.length).toBe(32);
  expect(second.equals(first)).toBe(true);
  const file = path.join(dir, 'encryption.key');
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64').equals(first)).toBe(true);
  const configured = Buffer.alloc(32, 9);
  expect(resolveEncryptionKey(configured, dir)).toBe(configured);
});
