import path from 'node:path';
import { convert as htmlToText } from 'html-to-text';
import mammoth from 'mammoth';
import { extractText as extractPdfText } from 'unpdf';

/** Programming languages by file extension: their files are chunked along declarations. */
const CODE_LANGUAGES: Record<string, string> = {
  '.ts': 'typescript', '.tsx': 'typescript', '.mts': 'typescript', '.cts': 'typescript',
  '.js': 'javascript', '.jsx': 'javascript', '.mjs': 'javascript', '.cjs': 'javascript',
  '.py': 'python', '.go': 'go', '.rs': 'rust', '.java': 'java', '.kt': 'kotlin', '.rb': 'ruby', '.php': 'php',
  '.c': 'c', '.h': 'c', '.cpp': 'cpp', '.cc': 'cpp', '.hpp': 'cpp', '.cs': 'csharp', '.swift': 'swift',
  '.scala': 'scala', '.sh': 'shell', '.bash': 'shell', '.sql': 'sql', '.yaml': 'yaml', '.yml': 'yaml',
  '.json': 'json', '.toml': 'toml', '.css': 'css', '.scss': 'scss',
};

const MIME_TYPES: Record<string, string> = {
  '.md': 'text/markdown', '.markdown': 'text/markdown', '.txt': 'text/plain', '.text': 'text/plain', '.rst': 'text/x-rst',
  '.csv': 'text/csv', '.html': 'text/html', '.htm': 'text/html', '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

export function mimeTypeFor(name: string): string {
  const extension = path.extname(name).toLowerCase();
  if (MIME_TYPES[extension]) return MIME_TYPES[extension];
  if (CODE_LANGUAGES[extension]) return 'text/plain';
  return 'application/octet-stream';
}

/** UTF-8 text, or null for binary content (a NUL byte in the first 8 KiB). */
function decodeText(bytes: Buffer): string | null {
  if (bytes.subarray(0, 8192).includes(0)) return null;
  return bytes.toString('utf8').replace(/^\uFEFF/, '');
}

/**
 * The searchable text of a file: Markdown, plain text and code as they are, HTML without markup,
 * scripts and styles, PDF and DOCX through their parsers. Null for what cannot be read as text.
 */
export async function extractText(file: { name: string; bytes: Buffer }): Promise<{ text: string; mimeType: string; language?: string } | null> {
  const extension = path.extname(file.name).toLowerCase();
  const mimeType = mimeTypeFor(file.name);
  switch (mimeType) {
    case 'application/pdf': {
      const { text } = await extractPdfText(new Uint8Array(file.bytes), { mergePages: true });
      return { text: text.trim(), mimeType };
    }
    case MIME_TYPES['.docx']: {
      const { value } = await mammoth.extractRawText({ buffer: file.bytes });
      return { text: value.trim(), mimeType };
    }
    case 'text/html': {
      const html = decodeText(file.bytes);
      if (html === null) return null;
      return { text: htmlToText(html, { wordwrap: false, selectors: [{ selector: 'a', options: { ignoreHref: true } }, { selector: 'img', format: 'skip' }] }).trim(), mimeType };
    }
    case 'application/octet-stream':
      return null;
    default: {
      const text = decodeText(file.bytes);
      if (text === null) return null;
      const language = CODE_LANGUAGES[extension];
      return language ? { text, mimeType, language } : { text, mimeType };
    }
  }
}
