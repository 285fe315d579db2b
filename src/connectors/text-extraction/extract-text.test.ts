import { describe, expect, jest, test } from '@jest/globals';
import { extractText, isSupported, mimeTypeFor } from './extract-text.js';
import { docxWith, pdfWith } from './test-fixtures.js';

describe('extractText', () => {
  test('PDF: the words of a hand-written one-page PDF, offline and without canvas', async () => {
    const realFetch = globalThis.fetch;
    const fetch = jest.fn(() => Promise.reject(new Error('no network in this test')));
    globalThis.fetch = fetch as unknown as typeof globalThis.fetch;
    try {
      const result = await extractText({ name: 'Report.PDF', bytes: pdfWith('Quarterly pelican census 2024') });
      expect(result).toEqual({ text: 'Quarterly pelican census 2024', mimeType: 'application/pdf' });
      expect(fetch).not.toHaveBeenCalled();
    } finally {
      globalThis.fetch = realFetch;
    }
  });

  test('PDF: a damaged file throws, so the caller can say why it was skipped', async () => {
    await expect(extractText({ name: 'broken.pdf', bytes: Buffer.from('%PDF-1.4\nnot really a pdf') })).rejects.toThrow();
  });

  test('DOCX: paragraphs as plain text', async () => {
    const result = await extractText({ name: 'minutes.docx', bytes: await docxWith(['Minutes of the otter meeting', 'Second paragraph']) });
    expect(result).toEqual({ text: 'Minutes of the otter meeting\n\nSecond paragraph', mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' });
  });

  test('HTML: title, headings (as Markdown headings of their level) and link texts kept in their case; scripts, styles and URLs dropped', async () => {
    const html = [
      '<!doctype html><html><head><title>Field guide</title><style>p { color: red }</style><script>alert("x")</script></head>',
      '<body><h1>Herons of <em>Europe</em></h1><h3>Nesting</h3><p>Read <a href="https://birds.example/grey">the grey heron page</a>.</p>',
      '<table><tr><th>Species</th><th>Length</th></tr><tr><td>Grey heron</td><td>95 cm</td></tr></table>',
      '<script type="module">console.log("tracking")</script><noscript>enable javascript</noscript><img src="x.png" alt="photo"></body></html>',
    ].join('');
    const result = await extractText({ name: 'guide.html', bytes: Buffer.from(html) });
    expect(result?.mimeType).toBe('text/html');
    expect(result?.text).toContain('Field guide');
    expect(result?.text).toContain('# Herons of Europe\n\n### Nesting\n\nRead the grey heron page.');
    expect(result?.text).toContain('Species Length\nGrey heron 95 cm');
    expect(result?.text).not.toMatch(/alert|color|console|tracking|javascript|birds\.example|photo|x\.png/);
  });

  test('HTML: a declared legacy charset is honoured when the bytes are not UTF-8', async () => {
    const bytes = Buffer.concat([Buffer.from('<meta charset="iso-8859-1"><p>Caf'), Buffer.from([0xe9]), Buffer.from('</p>')]);
    expect((await extractText({ name: 'menu.htm', bytes }))?.text).toBe('Café');
  });

  test('Markdown and plain text as they are, without a byte-order mark', async () => {
    expect(await extractText({ name: 'README.md', bytes: Buffer.from('\uFEFF# Heading\n\nSome *text*.\n') })).toEqual({ text: '# Heading\n\nSome *text*.\n', mimeType: 'text/markdown' });
    expect(await extractText({ name: 'notes.txt', bytes: Buffer.from('plain words') })).toEqual({ text: 'plain words', mimeType: 'text/plain' });
    expect(await extractText({ name: 'LICENSE', bytes: Buffer.from('Apache License') })).toEqual({ text: 'Apache License', mimeType: 'text/plain' });
  });

  test('UTF-16 with a byte-order mark and Windows-1252 text are decoded', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('héron ✓', 'utf16le')]);
    expect((await extractText({ name: 'a.txt', bytes: utf16 }))?.text).toBe('héron ✓');
    expect((await extractText({ name: 'b.txt', bytes: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]) }))?.text).toBe('café €');
  });

  test('binary content and unknown kinds are null', async () => {
    expect(await extractText({ name: 'notes.txt', bytes: Buffer.from([0x61, 0x00, 0x62]) })).toBeNull();
    expect(await extractText({ name: 'notes.md', bytes: Buffer.from(Array.from({ length: 100 }, (_, i) => (i % 2 ? 0x01 : 0x41))) })).toBeNull();
    expect(await extractText({ name: 'photo.png', bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) })).toBeNull();
    expect(await extractText({ name: 'archive.bin', bytes: Buffer.from('text, but of no known kind') })).toBeNull();
    expect(await extractText({ name: '.env', bytes: Buffer.from('SECRET=1') })).toBeNull();
  });

  test('source code keeps its text and gains a language', async () => {
    const code = 'export function helper(): number {\n  return 42;\n}\n';
    expect(await extractText({ name: 'src/tool.ts', bytes: Buffer.from(code) })).toEqual({ text: code, mimeType: 'text/x-typescript', language: 'typescript' });
    const languages = Object.fromEntries(
      await Promise.all(
        ['a.py', 'a.go', 'a.rs', 'a.java', 'a.kt', 'a.rb', 'a.php', 'a.c', 'a.h', 'a.cpp', 'a.hpp', 'a.cs', 'a.swift', 'a.scala', 'a.sh', 'a.sql', 'a.yaml', 'a.yml', 'a.json', 'a.toml', 'a.css', 'a.scss', 'a.tsx', 'a.jsx', 'a.mjs', 'a.cjs', 'Makefile', 'Dockerfile'].map(
          async (name) => [name, (await extractText({ name, bytes: Buffer.from('x') }))?.language],
        ),
      ),
    );
    expect(languages).toEqual({
      'a.py': 'python', 'a.go': 'go', 'a.rs': 'rust', 'a.java': 'java', 'a.kt': 'kotlin', 'a.rb': 'ruby', 'a.php': 'php', 'a.c': 'c', 'a.h': 'c',
      'a.cpp': 'cpp', 'a.hpp': 'cpp', 'a.cs': 'csharp', 'a.swift': 'swift', 'a.scala': 'scala', 'a.sh': 'bash', 'a.sql': 'sql', 'a.yaml': 'yaml',
      'a.yml': 'yaml', 'a.json': 'json', 'a.toml': 'toml', 'a.css': 'css', 'a.scss': 'scss', 'a.tsx': 'tsx', 'a.jsx': 'jsx', 'a.mjs': 'javascript',
      'a.cjs': 'javascript', Makefile: 'makefile', Dockerfile: 'dockerfile',
    });
    expect((await extractText({ name: 'notes.md', bytes: Buffer.from('x') }))?.language).toBeUndefined();
  });

  test('a MIME type given by the caller stands in for a missing extension', async () => {
    expect(await extractText({ name: 'download', bytes: pdfWith('Heron'), mimeType: 'application/pdf' })).toEqual({ text: 'Heron', mimeType: 'application/pdf' });
    expect(await extractText({ name: 'page', bytes: Buffer.from('<p>Hi</p>'), mimeType: 'text/html; charset=utf-8' })).toEqual({ text: 'Hi', mimeType: 'text/html' });
    // application/octet-stream says nothing: the content decides (see below), and binary bytes stay unread.
    expect(await extractText({ name: 'blob', bytes: Buffer.from([0x78, 0x00, 0x01]), mimeType: 'application/octet-stream' })).toBeNull();
  });
});

describe('files only their content can tell (issue 17)', () => {
  test('text without a known extension is read: Debian docs, copyright, Perl modules, scripts by their #! line', async () => {
    expect(await extractText({ name: 'README.Debian', bytes: Buffer.from('Notes for Debian users.') })).toEqual({ text: 'Notes for Debian users.', mimeType: 'text/plain' });
    expect(await extractText({ name: 'copyright', bytes: Buffer.from('Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/') })).toMatchObject({ mimeType: 'text/plain' });
    expect(await extractText({ name: 'Module.pm', bytes: Buffer.from('package Foo;\n1;\n') })).toMatchObject({ language: 'perl' });
    expect(await extractText({ name: 'update-alternatives', bytes: Buffer.from('#!/usr/bin/perl -w\nuse strict;\n') })).toMatchObject({ language: 'perl', mimeType: 'text/plain' });
    expect(await extractText({ name: 'postinst', bytes: Buffer.from('#!/bin/sh\nset -e\n') })).toMatchObject({ language: 'bash' });
    expect(await extractText({ name: 'tool', bytes: Buffer.from('#!/usr/bin/env python3.11\nprint(1)\n') })).toMatchObject({ language: 'python', mimeType: 'text/x-python' });
    expect(await extractText({ name: 'served', mimeType: 'application/octet-stream', bytes: Buffer.from('plain words') })).toMatchObject({ text: 'plain words' });
    for (const name of ['README.Debian', 'copyright', 'changelog.Debian', 'Module.pm', 'rules']) expect([name, isSupported(name)]).toEqual([name, true]);
  });

  test('binary content, binary formats and secrets stay unread, whatever they hold', async () => {
    expect(await extractText({ name: 'a.out', bytes: Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00]) })).toBeNull();
    for (const name of ['.env', '.env.local', '.env.json', 'id_rsa', 'server.key', 'tls/cert.pem', 'archive.zip', 'data.bin', 'font.woff2']) {
      expect([name, await extractText({ name, bytes: Buffer.from('SECRET=1 looks like text') }), isSupported(name)]).toEqual([name, null, false]);
    }
    // A MIME type that says what it is decides: an image is not sniffed as text.
    expect(await extractText({ name: 'pixel', mimeType: 'image/png', bytes: Buffer.from('not really an image') })).toBeNull();
  });
});

describe('mimeTypeFor and isSupported', () => {
  test('by extension, case-insensitively', () => {
    expect(mimeTypeFor('a.MD')).toBe('text/markdown');
    expect(mimeTypeFor('dir/a.html')).toBe('text/html');
    expect(mimeTypeFor('a.pdf')).toBe('application/pdf');
    expect(mimeTypeFor('a.docx')).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(mimeTypeFor('a.json')).toBe('application/json');
    expect(mimeTypeFor('a.go')).toBe('text/plain');
    expect(mimeTypeFor('a.exe')).toBe('application/octet-stream');
    expect(isSupported('a.png')).toBe(false);
    expect(isSupported('a.rs')).toBe(true);
    expect(isSupported('blob', 'text/plain')).toBe(true);
  });
});
