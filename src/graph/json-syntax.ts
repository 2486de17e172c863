/**
 * Where a JSON text goes wrong. `JSON.parse` names a line and column for some mistakes but not for an
 * unexpected token (the commonest: a stray comma), so a small scanner finds the offset itself.
 */

/** `text` without the UTF-8 byte order mark it may start with (some Windows editors write one). */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** `line L, column C: unexpected ","` for text that is not JSON; undefined when it is. */
export function describeJsonError(text: string): string | undefined {
  const offset = jsonErrorOffset(text);
  if (offset === undefined) return undefined;
  const before = text.slice(0, offset).split('\n');
  const found =
    offset >= text.length ? 'unexpected end of file' : `unexpected ${JSON.stringify(text[offset])}`;
  return `line ${before.length}, column ${before[before.length - 1]!.length + 1}: ${found}`;
}

/** Offset of the first character where `text` stops being JSON, or undefined when it is valid. */
export function jsonErrorOffset(text: string): number | undefined {
  let i = 0;
  const fail = (): never => {
    throw new JsonSyntaxStop(i);
  };
  const skipSpace = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const expect = (char: string): void => {
    if (text[i] !== char) fail();
    i++;
  };
  const string = (): void => {
    expect('"');
    while (text[i] !== '"') {
      if (i >= text.length || text.charCodeAt(i) < 0x20) fail();
      i += text[i] === '\\' ? 2 : 1;
    }
    i++;
  };
  const sequence = (close: string, item: () => void): void => {
    i++;
    skipSpace();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      item();
      skipSpace();
      if (text[i] === close) {
        i++;
        return;
      }
      expect(',');
    }
  };
  const value = (): void => {
    skipSpace();
    const char = text[i];
    if (char === '{')
      return sequence('}', () => {
        skipSpace();
        string();
        skipSpace();
        expect(':');
        value();
      });
    if (char === '[') return sequence(']', value);
    if (char === '"') return string();
    const word = ['true', 'false', 'null'].find((w) => text.startsWith(w, i));
    if (word) {
      i += word.length;
      return;
    }
    const number = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!number) return fail();
    i += number[0].length;
  };
  try {
    value();
    skipSpace();
    if (i < text.length) fail();
    return undefined;
  } catch (error) {
    if (error instanceof JsonSyntaxStop) return error.offset;
    throw error;
  }
}

class JsonSyntaxStop {
  constructor(readonly offset: number) {}
}
