/**
 * A tool's result as text a model (or a code node) can use: its text blocks as they are, other blocks
 * named with their size, structured content as JSON when there is no text. Untrusted and possibly huge,
 * so it is cut at MAX_RESULT_CHARS with a line that says so; the goal loop cuts shorter still.
 */

/** What a call gave back. */
export interface ToolOutcome {
  text: string;
  /** The server says the tool failed (`isError`): the text is its message. */
  isError: boolean;
  /** The result's structured content, when small enough to hand on whole. */
  structured?: unknown;
}

export const MAX_RESULT_CHARS = 100_000;

interface Block {
  type?: unknown;
  text?: unknown;
  data?: unknown;
  mimeType?: unknown;
  uri?: unknown;
  name?: unknown;
  resource?: { uri?: unknown; text?: unknown; blob?: unknown; mimeType?: unknown };
}

/** The result of `tools/call` (any shape the SDK lets through) as a ToolOutcome. */
export function toolResultText(result: Record<string, unknown>): ToolOutcome {
  const isError = result.isError === true;
  if ('toolResult' in result) return { text: cut(json(result.toolResult)), isError };
  const blocks = Array.isArray(result.content) ? (result.content as Block[]) : [];
  const parts = blocks.map(blockText);
  const structured = result.structuredContent;
  const structuredJson = structured === undefined ? undefined : json(structured);
  const text = parts.length > 0 ? parts.join('\n') : (structuredJson ?? '');
  return {
    text: cut(text),
    isError,
    ...(structuredJson !== undefined && structuredJson.length <= MAX_RESULT_CHARS && { structured }),
  };
}

function blockText(block: Block): string {
  switch (block.type) {
    case 'text':
      return String(block.text ?? '');
    case 'image':
    case 'audio':
      return `[${block.type} ${String(block.mimeType ?? '')}, ${base64Bytes(block.data).toLocaleString('en-US')} bytes]`;
    case 'resource_link':
      return `[resource ${String(block.uri ?? '')}${block.name ? ` (${String(block.name)})` : ''}]`;
    case 'resource': {
      const resource = block.resource ?? {};
      if (typeof resource.text === 'string') return resource.text;
      return `[resource ${String(resource.uri ?? '')}, ${String(resource.mimeType ?? 'binary')}, ${base64Bytes(resource.blob).toLocaleString('en-US')} bytes]`;
    }
    default:
      return `[${String(block.type)} content]`;
  }
}

function base64Bytes(data: unknown): number {
  return typeof data === 'string' ? Math.floor((data.length * 3) / 4) : 0;
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}

function cut(text: string): string {
  if (text.length <= MAX_RESULT_CHARS) return text;
  return `${text.slice(0, MAX_RESULT_CHARS)}\n[cut: the tool returned ${text.length.toLocaleString('en-US')} characters; the first ${MAX_RESULT_CHARS.toLocaleString('en-US')} are above]`;
}
