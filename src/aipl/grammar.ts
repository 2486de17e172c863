/**
 * AIPL's grammar, in Peggy (a PEG parser generator). The parser is generated from it on first use, once
 * per process. Its actions build raw parts: comments are kept as `{ kind: 'comment' }` markers and texts
 * come one character at a time; parse.ts merges them, and drops the lines that only held comments,
 * updates or a block's parentheses.
 *
 * What the grammar decides where the seed is silent (README, "AIPL"):
 * - `((`, `(#` and `(=` always open AIPL; `\(` writes a literal parenthesis.
 * - `{` opens a reference only when a name follows it (`{ns.key}`, `{{ns.key}}`); any other `{` is text,
 *   so JSON in a prompt needs no escaping.
 * - A block's condition stands on its opening line(s): a line break may follow an operator or an open
 *   parenthesis but not precede an operator, and the condition's own `)` may be left open (as in the
 *   seed's advanced example) or closed. Its text starts on the next line.
 * - Inside a block, parentheses in text must balance, since `)` closes the block.
 * - A conditional update is `(condition ? "question" -> ns.key)`; the quote after `?` is what tells it
 *   from text like "(ready?)". C's `?:` operator is not part of AIPL's expressions.
 */
import { createRequire } from 'node:module';
import type peggy from 'peggy';

/**
 * How deep a condition's tree may grow: `a && b && …` is a level per operator, `!!!…x` a level per
 * `!`. What renders and outlines a template walks the tree recursively, so a template from elsewhere
 * with thousands of operators would exhaust the stack; no prompt needs a condition of this size.
 */
export const MAX_EXPRESSION_DEPTH = 256;

const GRAMMAR = String.raw`
{
  function here() {
    const start = location().start;
    return { line: start.line, column: start.column };
  }
  function pos(where) {
    return { line: where.start.line, column: where.start.column };
  }
  function textPart(text) {
    return { kind: 'text', text };
  }
  const SPECIAL = ['char', 'user', 'assistant', 'date', 'time'];
  function refName(parts, where) {
    const shown = '{' + parts.join('.') + '}';
    if (parts.length === 1) {
      const name = parts[0].toLowerCase();
      if (SPECIAL.includes(name)) return { kind: 'special', name };
      error(shown + ' is not a name AIPL knows: a state name has a namespace, like {ns.' + parts[0] + '}, and the special names are {char}, {user}, {assistant}, {date} and {time}', where);
    }
    if (parts.length > 2) error(shown + ' has ' + parts.length + ' parts: a state name is exactly namespace.key', where);
    return name2(parts[0], parts[1]);
  }
  function name2(namespace, key) {
    if (namespace.toLowerCase() === 'vars') return { kind: 'var', name: key };
    return { kind: 'state', namespace: namespace.toLowerCase(), key: key.toLowerCase() };
  }
  function target(namespace, key, where) {
    if (namespace.toLowerCase() === 'vars') error('an update cannot store into vars.' + key + ': vars. names are the autogram\'s variables, which AIPL only reads', where);
    return { namespace: namespace.toLowerCase(), key: key.toLowerCase() };
  }
  function ref(parts, fallback, where) {
    const part = { kind: 'ref', name: refName(parts, where), at: pos(where) };
    if (fallback !== null) part.fallback = fallback;
    return part;
  }
  function stringParts(chars) {
    const parts = [];
    for (const c of chars) {
      const last = parts[parts.length - 1];
      if (typeof c !== 'string') parts.push(c);
      else if (last && last.kind === 'text') last.text += c;
      else parts.push(textPart(c));
    }
    return parts;
  }
  // How deep each expression node is (a name or a value is 1): an expression deeper than
  // MAX_EXPRESSION_DEPTH is an error where it starts, before anything walks it recursively.
  const depths = new WeakMap();
  function depthOf(node) {
    return depths.get(node) ?? 1;
  }
  function nested(node, children, where) {
    const depth = 1 + Math.max(0, ...children.map(depthOf));
    if (depth > ${MAX_EXPRESSION_DEPTH})
      error('this condition nests more than ${MAX_EXPRESSION_DEPTH} levels deep (each "!", "&&", "||", comparison and call adds one): split it into smaller conditions', where);
    depths.set(node, depth);
    return node;
  }
  function fold(head, tail, kind, where) {
    return tail.reduce((left, right) => nested({ kind, left, right }, [left, right], where), head);
  }
}

Template = @TopPart* End

TopPart = Silent / Ref / t:TopChar { return textPart(t); }

BodyPart = Silent / Ref / Group / t:BodyChar { return textPart(t); }

Silent = Comment / Update / Block

Comment
  = open:Open "(#" CommentText (")" / End { error('this comment is not closed: end it with ")"', open); })
    { return { kind: 'comment' }; }

CommentText = ("\\" . / "(" CommentText ")" / [^()\\])*

Update = ConditionalUpdate / PlainUpdate

PlainUpdate
  = open:Open "(=" __ question:Question __ Arrow __ target:Target __ Close
    { return { kind: 'update', question, target, at: pos(open) }; }

ConditionalUpdate
  = &ConditionalStart open:Open "(" __ condition:Expr __ "?" __ question:Question __ Arrow __ target:Target __ Close
    { return { kind: 'update', condition, question, target, at: pos(open) }; }

Block
  = open:Open "((" __ condition:Expr _h ")"? _h BlockLineEnd MisplacedOperator? body:BodyPart*
    (")" / End { error('the block opened here is not closed: end it with ")" (parentheses in its text must balance; write \\( or \\) for a lone one)', open); })
    { return { kind: 'block', condition, body: body.flat(), at: pos(open) }; }

MisplacedOperator
  = _h ("&&" / "||") { error('a condition goes on to the next line only after an operator: end the line above with it instead'); }

ConditionalStart = "(" __ Expr __ "?" __ '"'

Group = !ConditionalStart "(" ![(#=] inner:BodyPart* ")" { return [textPart('('), ...inner.flat(), textPart(')')]; }

Open = "" { return location(); }

Question = QuestionQuote @StringBody

QuestionQuote "a quoted question" = '"'

Arrow "\"->\"" = "->"

Close "\")\"" = ")"

Target "a state name like ns.key"
  = where:Open namespace:Ident "." key:Ident !("." Ident) { return target(namespace, key, where); }

BlockLineEnd "a line break (a block's text starts on the line after its condition)" = "\r\n" / "\n"

TopChar = Escape / !ConditionalStart @"(" ![(#=] / ")" / PlainChar

BodyChar = Escape / PlainChar

PlainChar = @"{" !RefStart / $[^(){\\]+

Escape = "\\" @[(){}\\] / "\\"

RefStart = "{"? IdentChar

Ref
  = where:Open "{{" parts:NameParts fallback:Fallback? "}}" { return ref(parts, fallback, where); }
  / where:Open "{" parts:NameParts fallback:Fallback? "}" { return ref(parts, fallback, where); }

NameParts = head:Ident tail:("." @Ident)* { return [head, ...tail]; }

Fallback = ":" chars:(Escape / [^}\\])* { return chars.join(''); }

Expr = Or

Or = head:And tail:(_h "||" __ @And)* { return fold(head, tail, 'or', location()); }

And = head:Compare tail:(_h "&&" __ @Compare)* { return fold(head, tail, 'and', location()); }

Compare
  = left:Unary tail:(_h @CompareOp __ @Unary)? {
    if (tail === null) return left;
    return nested({ kind: 'compare', op: tail[0], left, right: tail[1] }, [left, tail[1]], location());
  }

CompareOp = "==" / "!=" / "<=" / ">=" / "<" / ">"

// A loop rather than "!" Unary: a rule calling itself once per "!" would exhaust the stack on a long run.
Unary = nots:("!" __)* operand:Primary {
    return nots.reduce((inner) => nested({ kind: 'not', operand: inner }, [inner], location()), operand);
  }

Primary
  = "(" __ @Expr __ ")"
  / String
  / Call
  / ExprRef
  / Value

Value "a value" = Number / Boolean / StateName

Number = digits:$("-"? [0-9]+ ("." [0-9]+)?) !IdentChar { return { kind: 'literal', value: Number(digits) }; }

Boolean = value:("true"i / "false"i) !IdentChar { return { kind: 'literal', value: value.toLowerCase() === 'true' }; }

String = StringQuote parts:StringBody { return { kind: 'string', parts }; }

StringQuote "a quoted string" = '"'

StringBody = chars:StringChar* CloseQuote { return stringParts(chars); }

CloseQuote "the closing quote" = '"'

StringChar = "\\" @[(){}\\"] / "\\" / Ref / @"{" !RefStart / $[^"\\{]+

Call
  = where:Open fn:FunctionName _h "(" __ args:ArgList? __ ")"
    { return nested({ kind: 'call', fn, args: args ?? [], at: pos(where) }, args ?? [], location()); }

ArgList = head:Expr tail:(__ "," __ @Expr)* { return [head, ...tail]; }

ExprRef = r:Ref {
  const expr = { kind: 'name', name: r.name, at: r.at };
  if (r.fallback !== undefined) expr.fallback = r.fallback;
  return expr;
}

FunctionName "a function name" = @$([A-Za-z_] IdentChar*) &(_h "(")

StateName
  = where:Open namespace:Ident "." key:Ident !("." Ident) !IdentChar
    { return { kind: 'name', name: name2(namespace, key), at: pos(where) }; }

Ident = $IdentChar+

IdentChar = [A-Za-z0-9_]

_h "whitespace" = [ \t]*

__ "whitespace" = [ \t\r\n]*

End "end of template" = !.
`;

let parser: peggy.Parser | undefined;

/**
 * The parser generated from GRAMMAR, made on first use. Peggy is loaded then too, not when this module
 * is: linting a graph without AIPL, or starting the CLI, must not pay for it.
 */
export function aiplParser(): peggy.Parser {
  if (!parser) {
    const { generate } = createRequire(import.meta.url)('peggy') as typeof peggy;
    parser = generate(GRAMMAR, { grammarSource: 'aipl' });
  }
  return parser;
}
