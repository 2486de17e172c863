import { describe, expect, it } from 'vitest';
import {
  capturableNames,
  isStrict,
  mentionedNames,
  wrapCode,
  wrapExpression,
} from '../../src/sandbox/wrap.js';

describe('the text compiled for code and expressions', () => {
  it('lists each identifier the code mentions once, without keywords, the hooks or property names', () => {
    expect(
      capturableNames('let total = 0; for (const item of items) total += item.price; __sandboxFail'),
    ).toEqual(['total', 'item', 'of', 'items']);
  });

  it('takes a word after a dot for a property name only after a member access', () => {
    expect(capturableNames('a.b; f().c; d[0].e; g?.h; [...i]; j = 5.\nk; 1.5.l; m .n')).toEqual([
      'a',
      'f',
      'd',
      'g',
      'i',
      'j',
      'k',
      'l',
      'm',
      'n',
    ]);
  });

  it('says which variables a text can read: those it names, or all of them', () => {
    expect(mentionedNames('total > limit && items.length < 10')).toEqual(
      new Set(['total', 'limit', 'items']),
    );
    for (const reachesAny of ['globalThis[name]', 'this.x', 'eval(text)', 'Function(text)()', 'v\\u0031 + 1'])
      expect(mentionedNames(reachesAny), reachesAny).toBe('all');
  });

  it('lists identifiers beyond ASCII', () => {
    expect(capturableNames('const café = 1, π = 3.14, $x = 2, _y = 3')).toEqual(['café', 'π', '$x', '_y']);
  });

  it('recognises a "use strict" directive, after comments too', () => {
    expect(isStrict('"use strict"; x = 1')).toBe(true);
    expect(isStrict("// strict from here\n/* really */\n'use strict'\nx = 1")).toBe(true);
    expect(isStrict('x = 1; "use strict"')).toBe(false);
    expect(isStrict('"use strict".length')).toBe(false);
    expect(isStrict('\'use strict"')).toBe(false);
  });

  it('keeps the strict directive in front of the wrapper, where it still applies', () => {
    expect(wrapCode('"use strict"; x = 1').wrapped.startsWith("'use strict';try{\n")).toBe(true);
    expect(wrapCode('x = 1').wrapped.startsWith('try{\n')).toBe(true);
  });

  it('checks the code as written and an expression inside parentheses', () => {
    expect(wrapCode('x = 1').standalone).toBe('x = 1');
    expect(wrapExpression('a > 1').standalone).toBe('(a > 1\n)');
  });
});
