import { describe, expect, it } from 'vitest';
import { describeJsonError } from '../../src/graph/json-syntax.js';

describe('describeJsonError', () => {
  it('accepts every kind of JSON value', () => {
    const text = '{"a": [1, -2.5e3, true, false, null, "x\\"y\\u0041"], "b": {}, "c": []}';
    expect(() => JSON.parse(text) as unknown).not.toThrow();
    expect(describeJsonError(text)).toBeUndefined();
  });

  it('points at a stray comma, which JSON.parse reports without a position', () => {
    expect(describeJsonError('{\n  "nodes": [,]\n}')).toBe('line 2, column 13: unexpected ","');
  });

  it('points at a trailing comma before a closing brace', () => {
    expect(describeJsonError('{"a": 1,}')).toBe('line 1, column 9: unexpected "}"');
  });

  it('reports text that ends too early, and text after the value', () => {
    expect(describeJsonError('{"a": [1, 2')).toBe('line 1, column 12: unexpected end of file');
    expect(describeJsonError('{}\n{}')).toBe('line 2, column 1: unexpected "{"');
    expect(describeJsonError("{'a': 1}")).toBe('line 1, column 2: unexpected "\'"');
  });
});
