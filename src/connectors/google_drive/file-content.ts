import type { Logger } from '../../platform/logger.js';
import type { SourceEntity } from '../connector.js';
import { extractText, isSupported } from '../text-extraction/extract-text.js';
import { type DriveApi, type DriveFile, UnreadableContent } from './drive-api.js';

export const FOLDER_MIME_TYPE = 'application/vnd.google-apps.folder';

/**
 * Google's own formats have no content to download: they are exported (`files.export`), Docs and
 * Slides as plain text, Sheets as CSV (Google exports the first sheet).
 */
const EXPORTS: Record<string, { mimeType: string; extension: string }> = {
  'application/vnd.google-apps.document': { mimeType: 'text/plain', extension: '.txt' },
  'application/vnd.google-apps.spreadsheet': { mimeType: 'text/csv', extension: '.csv' },
  'application/vnd.google-apps.presentation': { mimeType: 'text/plain', extension: '.txt' },
};
/** Google caps exports at 10 MB. */
const EXPORT_LIMIT_BYTES = 10 * 1024 * 1024;

export interface FileText {
  text: string;
  mimeType: string;
  language?: string;
  /** The downloaded bytes of a binary file (exports are text already). */
  file?: SourceEntity['file'];
  /** The format the text was exported as, for Google's own formats. */
  exportedAs?: string;
}

/** The searchable text of a Drive file, or why it is left out (see SkippedItem: short fixed reasons). */
export async function readFileText(api: DriveApi, file: DriveFile, maxBytes: number, logger: Logger): Promise<FileText | UnreadableContent> {
  const exported = EXPORTS[file.mimeType];
  if (exported) {
    const bytes = await api.exportFile(file.id, exported.mimeType, Math.min(maxBytes, EXPORT_LIMIT_BYTES));
    if (bytes instanceof UnreadableContent) return bytes;
    // A synthetic name: the document's own ("report.pdf") would make the extraction read it as its extension says.
    const text = await extractText({ name: `export${exported.extension}`, bytes, mimeType: exported.mimeType });
    return text ? { text: text.text, mimeType: text.mimeType, exportedAs: exported.mimeType } : new UnreadableContent('no text');
  }
  if (file.mimeType.startsWith('application/vnd.google-apps.')) return new UnreadableContent('unsupported file type', file.mimeType);
  const size = Number(file.size ?? 0);
  if (size > maxBytes) return new UnreadableContent('too large', `${size} bytes`);
  if (!isSupported(file.name, file.mimeType)) return new UnreadableContent('unsupported file type', file.mimeType);
  const bytes = await api.download(file.id, maxBytes);
  if (bytes instanceof UnreadableContent) return bytes;
  try {
    const text = await extractText({ name: file.name, bytes, mimeType: file.mimeType });
    if (!text) return new UnreadableContent('no text', 'binary content');
    return { ...text, file: { name: file.name, mimeType: text.mimeType, size: bytes.length, bytes } };
  } catch (error) {
    logger.debug({ source: 'google_drive', fileId: file.id, err: error }, 'google_drive: text extraction failed');
    return new UnreadableContent('unreadable', error instanceof Error ? error.message : String(error));
  }
}
