/**
 * The parser: the decisions README's AIPL section documents where the seed is ambiguous, and every kind
 * of syntax error, each with its line and column.
 */
import { describe, expect, it } from 'vitest';
import { AiplSyntaxError, MAX_NESTING, parseTemplate } from '../../src/aipl/parse.js';
import { renderAipl } from '../support/aipl.js';

/** The error parsing `source` gives: `line:column: problem`. */
function errorOf(source: string): string {
  try {
    parseTemplate(source, 't');
  } catch (error) {
    if (error instanceof AiplSyntaxError) return `${error.at.line}:${error.at.column}: ${error.problem}`;
    throw error;
  }
  throw new Error(`parsed: ${JSON.stringify(source)}`);
}

async function rendered(source: string, values: Record<string, string> = {}): Promise<string> {
  return (await renderAipl(source, { values })).text;
}

describe('names', () => {
  it('are case-insensitive, with one brace or two', async () => {
    const parts = parseTemplate('{{NS.Key}} {ns.key} {Ns.KEY:x}').parts;
    expect(parts.filter((p) => p.kind === 'ref').map((p) => p.kind === 'ref' && p.name)).toEqual([
      { kind: 'state', namespace: 'ns', key: 'key' },
      { kind: 'state', namespace: 'ns', key: 'key' },
      { kind: 'state', namespace: 'ns', key: 'key' },
    ]);
    expect(await rendered('{{NS.Key}}/{ns.key}/{CHAR}', { 'ns.key': 'v' })).toBe('v/v/Ava');
  });

  it('are exactly namespace.key, of letters, digits and underscores', async () => {
    expect(await rendered('{user_info.first_name}', { 'user_info.first_name': 'Sam' })).toBe('Sam');
    expect(errorOf('Hi {a.b.c}!')).toBe('1:4: {a.b.c} has 3 parts: a state name is exactly namespace.key');
    expect(errorOf('Hi\n  {name}')).toMatch(
      /^2:3: \{name\} is not a name AIPL knows: a state name has a namespace, like \{ns.name\}/,
    );
  });

  it('default when unset or empty, and render nothing without a default', async () => {
    expect(await rendered('[{a.b:none yet}] [{a.c}]')).toBe('[none yet] []');
    expect(await rendered('{{a.b:x: y}}')).toBe('x: y');
  });

  it('read the autogram’s variables under vars., never as template', async () => {
    const out = await renderAipl('{vars.topic} {vars.Count} {vars.missing:none}', {
      vars: { topic: '{a.b} (= "q" -> c.d)', count: 3 },
    });
    expect(out.text).toBe('{a.b} (= "q" -> c.d) 3 none');
  });
});

describe('text that is not AIPL', () => {
  it('keeps JSON and braces that no name follows, without escaping', async () => {
    expect(await rendered('Reply as {"name": "…", "age": 3} or { x }.')).toBe(
      'Reply as {"name": "…", "age": 3} or { x }.',
    );
  });

  it('keeps parentheses of prose, and a question mark in them', async () => {
    expect(await rendered('Be brief (really?) :) (see below)')).toBe('Be brief (really?) :) (see below)');
  });

  it('writes \\(, \\), \\{, \\} and \\\\ as the character itself', async () => {
    expect(await rendered('\\(= not an update\\) \\{a.b\\} \\\\ \\n')).toBe('(= not an update) {a.b} \\ \\n');
  });

  it('refuses ((, (# and (= written as prose: they always open AIPL', () => {
    expect(errorOf('Smile ((like this))')).toBe('1:9: expected an expression, found "l"');
    expect(errorOf('(=^.^=)')).toMatch(/^1:3: expected a quoted question/);
  });
});

describe('comments', () => {
  it('render as nothing, and take their line with them when alone on it', async () => {
    expect(await rendered('a (# note) b\n(# a whole\nline comment (with parentheses))\nc')).toBe('a  b\nc');
  });
});

describe('blocks', () => {
  it('take the seed’s form, the condition’s parenthesis left open, or a closed one', async () => {
    const open = '((a.b > 1\nshown\n)\nend';
    const closed = '((a.b > 1)\nshown\n)\nend';
    for (const source of [open, closed]) {
      expect(await rendered(source, { 'a.b': '2' })).toBe('shown\nend');
      expect(await rendered(source, { 'a.b': '0' })).toBe('end');
    }
  });

  it('continue a condition on the next line after an operator, not before one', async () => {
    expect(await rendered('((a.b > 1 &&\n  a.c == "x"\nboth\n)', { 'a.b': '2', 'a.c': 'X' })).toBe('both\n');
    expect(errorOf('((a.b > 1\n&& a.c\ntext\n)')).toBe(
      '2:1: a condition goes on to the next line only after an operator: end the line above with it instead',
    );
  });

  it('start their text on the line after the condition', () => {
    expect(errorOf('((a.b > 1) shown)')).toBe(
      '1:12: expected a line break (a block\'s text starts on the line after its condition), found "s"',
    );
  });

  it('nest, each closing ) on its own line leaving no blank line', async () => {
    const source = 'top\n((a.b\n  outer\n  ((a.c\n    inner\n  )\n  after\n)\nend';
    expect(await rendered(source, { 'a.b': 'yes', 'a.c': 'yes' })).toBe(
      'top\n  outer\n    inner\n  after\nend',
    );
    expect(await rendered(source, { 'a.b': 'yes', 'a.c': 'no' })).toBe('top\n  outer\n  after\nend');
  });

  it('need balanced parentheses in their text, since ) closes them', async () => {
    expect(await rendered('((a.b\nsteps (in order): 1\\) plan\n)', { 'a.b': 'true' })).toBe(
      'steps (in order): 1) plan\n',
    );
    expect(errorOf('((a.b\nsad :(\n)')).toMatch(/^1:1: the block opened here is not closed/);
  });
});

describe('updates', () => {
  it('are conditional when a condition and ? come first; the quote tells them from prose', () => {
    const [update] = parseTemplate('(a.b > 0 ? "Why?" -> a.why)').parts;
    expect(update).toMatchObject({
      kind: 'update',
      condition: { kind: 'compare', op: '>' },
      target: { namespace: 'a', key: 'why' },
    });
    expect(parseTemplate('(ready? "yes" -> maybe)').parts).toEqual([
      { kind: 'text', text: '(ready? "yes" -> maybe)' },
    ]);
    expect(errorOf('(a.b > 0 ? "Why?" a.why)')).toBe('1:19: expected "->", found "a"');
  });

  it('may break the line around the arrow', () => {
    expect(parseTemplate('(= "Where?"\n  ->\n  A.Where)').parts[0]).toMatchObject({
      target: { namespace: 'a', key: 'where' },
    });
  });

  it('cannot store into the autogram’s variables', () => {
    expect(errorOf('(= "q" -> vars.x)')).toBe(
      "1:11: an update cannot store into vars.x: vars. names are the autogram's variables, which AIPL only reads",
    );
  });
});

describe('syntax errors', () => {
  it.each([
    ['an unclosed comment', 'a\n(# never closed', '2:1: this comment is not closed: end it with ")"'],
    ['an unclosed block', 'a\n((b.c\ntext', '2:1: the block opened here is not closed'],
    [
      'an unclosed string',
      '(= "Where did',
      '1:14: expected the closing quote, found the end of the template',
    ],
    ['a missing arrow', '(= "q" a.b)', '1:8: expected "->", found "a"'],
    ['a missing name after the arrow', '(= "q" -> )', '1:11: expected a state name like ns.key, found ")"'],
    ['a missing )', '(= "q" -> a.b', '1:14: expected ")", found the end of the template'],
    ['an unclosed reference', 'Hi {a.b there', '1:8: expected ".", ":" or "}", found " "'],
    ['a condition cut short', '((a.b >\ntext\n)', '2:1: expected an expression, found "t"'],
    ['a bare word in a condition', '((happy\ntext\n)', '1:3: expected an expression, found "h"'],
    ['a call left open', '((f("x"\ntext\n)', '2:1: expected "," or ")", found "t"'],
    ['an operator with nothing after it', '((a.b >)\nx\n)', '1:8: expected an expression, found ")"'],
  ])('%s', (_what, source, message) => {
    expect(errorOf(source).startsWith(message)).toBe(true);
  });

  it('refuses parentheses nested deeper than any prompt needs, quickly and without exhausting the stack', () => {
    const deep = '((' + '('.repeat(5000) + 'x.y' + ')'.repeat(5000) + '\nhi\n)';
    expect(errorOf(deep)).toBe(`1:${MAX_NESTING + 1}: parentheses nest more than ${MAX_NESTING} deep here`);
    // A block opens two parentheses.
    const blocks = '((x.y\n'.repeat(MAX_NESTING / 2) + ')\n'.repeat(MAX_NESTING / 2);
    expect(parseTemplate(blocks).parts).toHaveLength(1);
    const parens = '((' + '('.repeat(60) + 'x.y' + ')'.repeat(60) + '\nhi\n)';
    expect(parseTemplate(parens).parts).toHaveLength(1);
  });

  it('names the template, and shows the line with a caret under the column', () => {
    try {
      parseTemplate('first\nsecond (= "q" -> )', 'sales.aipl');
      expect.unreachable();
    } catch (error) {
      const e = error as AiplSyntaxError;
      expect(e.message).toBe('sales.aipl:2:18: expected a state name like ns.key, found ")"');
      expect(e.hint).toBe('2 | second (= "q" -> )\n  |                  ^');
      expect(e.exitCode).toBe(2);
    }
  });
});
