import path from 'node:path';
import { convert as htmlToText, type HtmlToTextOptions } from 'html-to-text';
import mammoth from 'mammoth';
import { extractText as extractPdfText, getDocumentProxy } from 'unpdf';

/**
 * Turns files into searchable text: Markdown, plain text and source code as they are (decoded,
 * BOM stripped), HTML without markup, scripts and styles (html-to-text), PDF through pdf.js
 * (unpdf's serverless build: no canvas, no worker, no network) and DOCX through mammoth.
 *
 * The kind of a file comes from its extension (or a few well-known names such as `Makefile`),
 * then from the MIME type the caller gives. A file neither names (no MIME type, or only
 * `application/octet-stream`) is read when its content is text: scripts without an extension (a
 * `#!` line gives their language), `README.Debian`, `copyright`, Perl modules. Known binary
 * extensions are never read, nor are secrets (`.env`, private keys), whatever they hold. Bump
 * EXTRACTION_VERSION when the text produced for the same bytes changes, so sources that skip
 * unchanged files (local_folder) read them again.
 */
export const EXTRACTION_VERSION = 3;

type Kind = 'text' | 'markdown' | 'html' | 'pdf' | 'docx' | 'code';
interface FileType {
  kind: Kind;
  mimeType: string;
  language?: string;
}

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** Programming and configuration languages by extension: their files are chunked along declarations. */
const CODE_LANGUAGES: Record<string, string> = {
  '.ts': 'typescript', '.tsx': 'tsx', '.mts': 'typescript', '.cts': 'typescript',
  '.js': 'javascript', '.jsx': 'jsx', '.mjs': 'javascript', '.cjs': 'javascript',
  '.py': 'python', '.pyi': 'python', '.go': 'go', '.rs': 'rust', '.java': 'java', '.kt': 'kotlin', '.kts': 'kotlin',
  '.rb': 'ruby', '.php': 'php', '.c': 'c', '.h': 'c', '.cpp': 'cpp', '.cc': 'cpp', '.cxx': 'cpp', '.hpp': 'cpp',
  '.hh': 'cpp', '.hxx': 'cpp', '.cs': 'csharp', '.swift': 'swift', '.scala': 'scala', '.sc': 'scala',
  '.sh': 'bash', '.bash': 'bash', '.zsh': 'bash', '.ps1': 'powershell', '.sql': 'sql',
  '.yaml': 'yaml', '.yml': 'yaml', '.json': 'json', '.jsonc': 'json', '.toml': 'toml', '.ini': 'ini', '.xml': 'xml',
  '.css': 'css', '.scss': 'scss', '.sass': 'sass', '.less': 'less', '.vue': 'vue', '.svelte': 'svelte',
  '.lua': 'lua', '.r': 'r', '.dart': 'dart', '.ex': 'elixir', '.exs': 'elixir', '.erl': 'erlang', '.hs': 'haskell',
  '.clj': 'clojure', '.ml': 'ocaml', '.fs': 'fsharp', '.pl': 'perl', '.pm': 'perl', '.groovy': 'groovy', '.gradle': 'groovy',
  '.graphql': 'graphql', '.gql': 'graphql', '.proto': 'protobuf', '.tf': 'hcl', '.hcl': 'hcl', '.zig': 'zig',
  '.jl': 'julia', '.nim': 'nim', '.m': 'objective-c', '.mm': 'objective-cpp',
};

/** Extension-less files recognised by name. */
const CODE_FILE_NAMES: Record<string, string> = { makefile: 'makefile', gnumakefile: 'makefile', dockerfile: 'dockerfile', containerfile: 'dockerfile', jenkinsfile: 'groovy', rakefile: 'ruby', gemfile: 'ruby' };
const TEXT_FILE_NAMES = new Set(['readme', 'license', 'licence', 'copying', 'notice', 'authors', 'contributors', 'changelog', 'changes', 'todo']);

const DOCUMENT_TYPES: Record<string, FileType> = {
  '.md': { kind: 'markdown', mimeType: 'text/markdown' },
  '.markdown': { kind: 'markdown', mimeType: 'text/markdown' },
  '.mdx': { kind: 'markdown', mimeType: 'text/markdown' },
  '.txt': { kind: 'text', mimeType: 'text/plain' },
  '.text': { kind: 'text', mimeType: 'text/plain' },
  '.log': { kind: 'text', mimeType: 'text/plain' },
  '.rst': { kind: 'text', mimeType: 'text/x-rst' },
  '.adoc': { kind: 'text', mimeType: 'text/asciidoc' },
  '.org': { kind: 'text', mimeType: 'text/x-org' },
  '.tex': { kind: 'text', mimeType: 'text/x-tex' },
  '.csv': { kind: 'text', mimeType: 'text/csv' },
  '.tsv': { kind: 'text', mimeType: 'text/tab-separated-values' },
  '.html': { kind: 'html', mimeType: 'text/html' },
  '.htm': { kind: 'html', mimeType: 'text/html' },
  '.xhtml': { kind: 'html', mimeType: 'application/xhtml+xml' },
  '.pdf': { kind: 'pdf', mimeType: 'application/pdf' },
  '.docx': { kind: 'docx', mimeType: DOCX },
};

/** Registered (or de facto) MIME types of code files; the rest are served as text/plain. */
const CODE_MIME_TYPES: Record<string, string> = {
  javascript: 'text/javascript', jsx: 'text/javascript', json: 'application/json', css: 'text/css',
  yaml: 'application/yaml', toml: 'application/toml', xml: 'application/xml', sql: 'application/sql',
  typescript: 'text/x-typescript', tsx: 'text/x-typescript', python: 'text/x-python',
};

/** What a file is by its name, or null when the name says nothing. */
function classifyName(name: string): FileType | null {
  const base = path.basename(name).toLowerCase();
  const extension = path.extname(base);
  const document = DOCUMENT_TYPES[extension];
  if (document) return document;
  const language = CODE_LANGUAGES[extension] ?? (extension === '' ? CODE_FILE_NAMES[base] : undefined);
  if (language) return { kind: 'code', mimeType: CODE_MIME_TYPES[language] ?? 'text/plain', language };
  if (extension === '' && TEXT_FILE_NAMES.has(base)) return { kind: 'text', mimeType: 'text/plain' };
  return null;
}

/** Extensions of formats that are never text: not read at all (an `.svg` or `.json` is text, so not here). */
const BINARY_EXTENSIONS = new Set(
  (
    '.png .jpg .jpeg .gif .bmp .ico .icns .webp .tif .tiff .psd .heic .avif .mp3 .mp4 .m4a .m4v .wav .ogg .oga .flac .aac ' +
    '.avi .mov .mkv .webm .zip .gz .tgz .bz2 .xz .zst .lz .lz4 .7z .rar .tar .jar .war .ear .deb .rpm .apk .dmg .iso .img ' +
    '.exe .dll .so .dylib .o .a .lib .obj .class .pyc .pyo .wasm .bin .dat .db .sqlite .sqlite3 .parquet .arrow .lance ' +
    '.woff .woff2 .ttf .otf .eot .doc .xls .xlsx .ppt .pptx .odt .ods .odp .epub .mobi'
  ).split(' '),
);
/** Secrets are never indexed, whatever their content. */
const SECRET_NAME = /^(\.env(\..*)?|id_(rsa|dsa|ecdsa|ed25519)|\.netrc|\.pgpass|\.npmrc|\.pypirc|.*\.(key|pem|p12|pfx|jks|keystore))$/;

/** A file whose name rules it out: a binary format or a secret. */
function neverRead(name: string): boolean {
  const base = path.basename(name).toLowerCase();
  return SECRET_NAME.test(base) || BINARY_EXTENSIONS.has(path.extname(base));
}

/** Interpreters of `#!` lines, by the program's name. */
const SHEBANG_LANGUAGES: Record<string, string> = { sh: 'bash', bash: 'bash', dash: 'bash', zsh: 'bash', ksh: 'bash', perl: 'perl', python: 'python', python3: 'python', ruby: 'ruby', node: 'javascript', php: 'php', lua: 'lua' };

/** A file only its content can tell: text of no particular kind, or a script in the language its `#!` line names. */
function sniffedType(text: string): FileType {
  const interpreter = /^#!\s*(?:\S*\/)?([\w.+-]+)(?:\s+(?:-\S+\s+)*([\w.+-]+))?/.exec(text);
  const program = interpreter ? (interpreter[1] === 'env' ? interpreter[2] : interpreter[1])?.replace(/[\d.]+$/, '') : undefined;
  const language = program ? (SHEBANG_LANGUAGES[program] ?? SHEBANG_LANGUAGES[`${program}3`]) : undefined;
  return language ? { kind: 'code', mimeType: CODE_MIME_TYPES[language] ?? 'text/plain', language } : { kind: 'text', mimeType: 'text/plain' };
}

/** Only content can tell: no MIME type, or the one that says nothing. */
const sniffable = (mimeType: string | undefined) => !mimeType || /^application\/octet-stream\b/i.test(mimeType);

/** What a file is by a MIME type the caller knows (parameters such as `; charset=` ignored). */
function classifyMimeType(mimeType: string | undefined): FileType | null {
  const type = mimeType?.split(';')[0]?.trim().toLowerCase();
  if (!type) return null;
  if (type === 'application/pdf') return { kind: 'pdf', mimeType: type };
  if (type === DOCX) return { kind: 'docx', mimeType: type };
  if (type === 'text/html' || type === 'application/xhtml+xml') return { kind: 'html', mimeType: type };
  if (type === 'text/markdown' || type === 'text/x-markdown') return { kind: 'markdown', mimeType: 'text/markdown' };
  if (type.startsWith('text/')) return { kind: 'text', mimeType: type };
  return null;
}

/** The MIME type of a file by its name; `application/octet-stream` for what extractText does not read. */
export function mimeTypeFor(name: string): string {
  return classifyName(name)?.mimeType ?? 'application/octet-stream';
}

/** Whether extractText reads this file at all (the content may still turn out binary). */
export function isSupported(name: string, mimeType?: string): boolean {
  if (neverRead(name)) return false;
  return classifyName(name) !== null || classifyMimeType(mimeType) !== null || sniffable(mimeType);
}

const SNIFF_BYTES = 8192;

/** A NUL byte, or many control characters other than whitespace, in the first 8 KiB: not text. */
function looksBinary(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, SNIFF_BYTES);
  if (head.includes(0)) return true;
  let control = 0;
  for (const byte of head) {
    // Tab, line feed, vertical tab, form feed, carriage return and escape occur in real text.
    if ((byte < 0x20 && (byte < 0x09 || byte > 0x0d) && byte !== 0x1b) || byte === 0x7f) control++;
  }
  return head.length > 0 && control / head.length > 0.1;
}

const decoderFor = (label: string, fatal = false): TextDecoder | null => {
  try {
    return new TextDecoder(label, { fatal });
  } catch {
    return null; // an encoding label this runtime does not know
  }
};

/** `<meta charset>` or `<meta http-equiv content="…; charset=…">` within the first 1 KiB of a page. */
function declaredCharset(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  return /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)?.[1];
}

/**
 * Text from bytes: a UTF-8 or UTF-16 byte-order mark decides (and is dropped); otherwise binary
 * content is refused, valid UTF-8 is taken as such, and anything else is read in the declared
 * charset (HTML) or Windows-1252, the usual encoding of legacy "plain text".
 */
function decodeText(bytes: Uint8Array, charsetHint?: string): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder('utf-8').decode(bytes.subarray(3));
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return decoderFor('utf-16be')?.decode(bytes.subarray(2)) ?? null;
  if (looksBinary(bytes)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const fallback = (charsetHint && decoderFor(charsetHint)) || new TextDecoder('windows-1252');
    return fallback.decode(bytes);
  }
}

/**
 * Headings and link texts keep their words and case; scripts, styles, images and URLs go. Headings
 * are written as Markdown (`## Title`), so the chunker knows each passage's section.
 */
const HTML_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  baseElements: { selectors: ['title', 'body'], returnDomByDefault: true },
  formatters: {
    markdownHeading: (element, walk, builder, options) => {
      builder.openBlock({ leadingLineBreaks: options.leadingLineBreaks ?? 2 });
      builder.addInline(`${'#'.repeat(Number(options.level ?? 1))} `);
      walk(element.children, builder);
      builder.closeBlock({ trailingLineBreaks: options.trailingLineBreaks ?? 2 });
    },
  },
  selectors: [
    ...(['h1', 'h2', 'h3', 'h4', 'h5', 'h6'] as const).map((selector, i) => ({ selector, format: 'markdownHeading', options: { level: i + 1 } })),
    { selector: 'title', format: 'block' },
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    // Table rows on their own lines, cells separated by a space (layout tables stay compact).
    { selector: 'table', format: 'block' },
    { selector: 'tr', format: 'block', options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
    ...['th', 'td'].map((selector) => ({ selector, format: 'inlineSurround', options: { prefix: '', suffix: ' ' } })),
    ...['script', 'style', 'noscript', 'template', 'svg', 'canvas', 'iframe', 'object'].map((selector) => ({ selector, format: 'skip' })),
  ],
};

async function pdfText(bytes: Buffer): Promise<string> {
  // A copy: pdf.js takes ownership of (detaches) the buffer it is given. Without pdfjs-dist installed
  // unpdf sets no font or CMap URLs, so nothing is fetched; verbosity 0 keeps pdf.js warnings off stdout.
  const document = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0, isOffscreenCanvasSupported: false, useWorkerFetch: false, stopAtErrors: false });
  try {
    const { text } = await extractPdfText(document, { mergePages: true });
    return text;
  } finally {
    await document.loadingTask.destroy();
  }
}

/** Tidies extracted document text: no trailing spaces, at most one blank line in a row. */
const tidy = (text: string) => text.replace(/[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n').trim();

/**
 * The searchable text of a file, its MIME type, and its programming language when it is source
 * code. Null when the file is of an unsupported kind or its content is binary. Throws when a PDF
 * or DOCX cannot be parsed (damaged, encrypted), so callers can say why a file was skipped.
 */
export async function extractText(file: { name: string; bytes: Buffer; mimeType?: string }): Promise<{ text: string; mimeType: string; language?: string } | null> {
  if (neverRead(file.name)) return null;
  const type = classifyName(file.name) ?? classifyMimeType(file.mimeType);
  if (!type) {
    if (!sniffable(file.mimeType)) return null;
    const text = decodeText(file.bytes);
    if (text === null) return null;
    const sniffed = sniffedType(text);
    return sniffed.language ? { text, mimeType: sniffed.mimeType, language: sniffed.language } : { text, mimeType: sniffed.mimeType };
  }
  const { mimeType } = type;
  switch (type.kind) {
    case 'pdf':
      return { text: tidy(await pdfText(file.bytes)), mimeType };
    case 'docx': {
      const { value } = await mammoth.extractRawText({ buffer: file.bytes });
      return { text: tidy(value), mimeType };
    }
    case 'html': {
      const html = decodeText(file.bytes, declaredCharset(file.bytes));
      if (html === null) return null;
      return { text: tidy(htmlToText(html, HTML_OPTIONS)), mimeType };
    }
    case 'markdown':
    case 'text':
    case 'code': {
      const text = decodeText(file.bytes);
      if (text === null) return null;
      return type.language ? { text, mimeType, language: type.language } : { text, mimeType };
    }
  }
}
