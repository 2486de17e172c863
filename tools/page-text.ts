/**
 * A fetched body as text the model can read: HTML becomes its readable text (no script, style or
 * images; a link keeps its text and its absolute address), plain text and JSON stay as they are.
 */
import { convert, type HtmlToTextOptions } from 'html-to-text';

/** A response's media type, lower case, and the charset it declares. */
export interface ContentType {
  type: string;
  charset?: string;
}

/** The media types that can be made text of, and which of them are HTML. */
export const READABLE_TYPES: ReadonlyMap<string, 'html' | 'text'> = new Map([
  ['text/html', 'html'],
  ['application/xhtml+xml', 'html'],
  ['text/plain', 'text'],
  ['application/json', 'text'],
]);

/** `text/html; charset=ISO-8859-1` → `{ type: 'text/html', charset: 'ISO-8859-1' }`. */
export function parseContentType(header: string): ContentType {
  const type = header.split(';', 1)[0]!.trim().toLowerCase();
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(header)?.[1];
  return charset === undefined ? { type } : { type, charset };
}

/** The body of a page of a READABLE_TYPES type as readable text; `url` resolves its relative links. */
export function readableText(body: Uint8Array, contentType: ContentType, url: string): string {
  const html = READABLE_TYPES.get(contentType.type) === 'html';
  const label = contentType.charset ?? (html ? metaCharset(body) : undefined);
  const text = decode(body, label);
  return tidy(html ? convert(text, HTML_OPTIONS, { url }) : text);
}

/** Without spaces at line ends or runs of blank lines, which cost the model tokens and say nothing. */
function tidy(text: string): string {
  // Line by line rather than with /[ \t]+$/gm, which backtracks quadratically over a long run of spaces.
  const lines = text.split('\n').map((line) => line.trimEnd());
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Bytes read for a `<meta charset>`: the HTML standard has it within the first 1024. */
const META_PREFIX_BYTES = 1024;

/** `<meta charset="x">` or `<meta http-equiv="Content-Type" content="text/html; charset=x">`. */
const META_CHARSET = /<meta[^>]*?charset\s*=\s*["']?\s*([\w.:-]+)/i;

function metaCharset(body: Uint8Array): string | undefined {
  const prefix = Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, META_PREFIX_BYTES));
  return META_CHARSET.exec(prefix.toString('latin1'))?.[1];
}

/** The text in `label`'s encoding; UTF-8 where the label is missing or unknown. */
function decode(body: Uint8Array, label: string | undefined): string {
  if (label !== undefined) {
    try {
      return new TextDecoder(label).decode(body);
    } catch {
      // An encoding TextDecoder does not know: UTF-8 reads most pages, and ASCII in any of them.
    }
  }
  return new TextDecoder().decode(body);
}

/**
 * Deeper elements are left out (as `…`): real pages nest a few dozen levels, and the converter walks
 * the tree recursively, so a crafted page nested a hundred thousand deep would exhaust the stack.
 */
const MAX_DEPTH = 256;

const HTML_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  baseElements: { selectors: ['title', 'body'], orderBy: 'occurrence' },
  // The body is already cut at the byte cap; the converter's own cut would write to stderr.
  limits: { maxDepth: MAX_DEPTH, ellipsis: '…', maxInputLength: Number.MAX_SAFE_INTEGER },
  selectors: [
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true, pathRewrite: linkTarget } },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
    ...['img', 'svg', 'template', 'iframe'].map((selector) => ({ selector, format: 'skip' })),
    // Cells in a row, separated, rather than run together.
    { selector: 'tr', format: 'block', options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
    ...['td', 'th'].map((selector) => ({ selector, format: 'inlineSurround', options: { suffix: ' | ' } })),
  ],
};

/** A link's absolute http(s) address, or '' (the text alone) for any other kind of link. */
function linkTarget(href: string, page: { url: string }): string {
  if (!URL.canParse(href, page.url)) return '';
  const target = new URL(href, page.url);
  return target.protocol === 'http:' || target.protocol === 'https:' ? target.href : '';
}
