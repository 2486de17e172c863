/**
 * The JavaScript that prepares each fresh context, and the shape of what it hands back. It is source
 * text because it runs inside the isolate, where nothing of ours exists.
 *
 * Setup (`evalClosure`, before any user code, so nothing it captures has been tampered with) removes
 * the globals whose work would happen outside an evaluation's time or memory limit, pins
 * `Error.prepareStackTrace`, installs a collecting `console` and the two hooks the wrapped code calls,
 * and returns `run`.
 *
 * `run(scope, layout, source, mode)` is the evaluation, in one call under one time limit: it defines
 * the scope variables and the exposed namespaces, evaluates the wrapped source with an indirect `eval`
 * (global code, exactly as a script; the only way to hold the completion value without a second call),
 * and builds the answer out of fresh plain objects and arrays, so that copying it to the host runs no
 * JavaScript at all (isolated-vm copies with JavaScript disallowed). User code can tamper with builtins
 * in its own context; that can distort only this evaluation's own answer, so the guest captures the
 * functions it needs rather than defending every prototype method.
 */
import { CAPTURE_HOOK, CODE_FILENAME, FAIL_HOOK, WRAPPED_LINE_OFFSET } from './wrap.js';

/** Bounds on what `console` keeps. */
export interface GuestOptions {
  maxLogLines: number;
  maxLogChars: number;
}

/** `code` reads the variables back; `expression` only the value. */
export type GuestMode = 'code' | 'expression';

/** Where a value that is not plain data was found. */
export interface UncopyablePlace {
  /** The variable holding it; absent for the code's (or expression's) value. */
  variable?: string;
  /** `cfg.handlers[0]`, or `""` for the value itself. */
  path: string;
  /** `a function`, `a symbol`, `a Date`, `a reference to itself (a cycle)`… */
  what: string;
}

/** What `run` returns, copied out as plain data. */
export type GuestOutcome =
  | { ok: true; value: unknown; scope: Record<string, unknown>; logs: string[] }
  | { ok: false; problem: 'thrown'; name: string; message: string; line?: number; logs: string[] }
  | { ok: false; problem: 'syntax'; message: string }
  | ({ ok: false; problem: 'uncopyable' } & UncopyablePlace);

/** What the host function dispatcher answers a call from inside. */
export type HostReply = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * Parameters: $0 the synchronous host dispatcher (a function), $1 the asynchronous one (a Reference,
 * which never leaves this closure), $2 GuestOptions. Returns `run(scope, layout, source, mode)`, where
 * layout is NamespaceLayout[].
 */
export const GUEST_SETUP = String.raw`'use strict';
const dispatch = $0, asyncDispatch = $1, options = $2;
const g = globalThis, indirectEval = g.eval;
const { create, defineProperty, freeze, getOwnPropertyNames, getPrototypeOf, hasOwn, keys } = Object;
const isArray = Array.isArray, objectPrototype = Object.prototype;
const ErrorCtor = Error, SyntaxErrorCtor = SyntaxError, TypeErrorCtor = TypeError;
const stringify = JSON.stringify, toText = String;
const identifier = /^[A-Za-z_$][\w$]*$/;
// A stack frame in the user's code; not the origin of an \`eval at …\` frame, whose line V8 gives unadjusted.
const codeLine = /\bat (?:.*? \()?${CODE_FILENAME.replace('.', '\\.')}:(\d+):\d+\)?$/m;

// Cleanup callbacks, waitAsync and wasm compilation run later, outside any evaluation's time limit;
// wasm memory is not counted against the isolate's memory limit.
for (const name of ['FinalizationRegistry', 'Atomics', 'SharedArrayBuffer', 'WebAssembly']) delete g[name];
defineProperty(ErrorCtor, 'prepareStackTrace', { value: undefined, writable: false, enumerable: false, configurable: false });

const put = (array, index, value) =>
  defineProperty(array, index, { value, writable: true, enumerable: true, configurable: true });
const member = (key) => (identifier.test(key) ? '.' + key : '[' + stringify(key) + ']');
const an = (noun) => (/^[AEIOU]/.test(noun) ? 'an ' : 'a ') + noun;
const describe = (value) => {
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (typeof value === 'bigint') return 'a BigInt';
  try {
    const proto = getPrototypeOf(value);
    const ctor = proto !== null && hasOwn(proto, 'constructor') ? proto.constructor : undefined;
    if (typeof ctor === 'function' && typeof ctor.name === 'string' && ctor.name) return an(ctor.name);
  } catch {}
  return 'an object that is not a plain object';
};

// toPlain copies a value into fresh arrays and null-prototype objects, or stops at the first part that
// is not plain data, leaving where in 'problem'.
const STOP = freeze(create(null)), MAX_DEPTH = 1000;
let problem = null;
const toPlain = (value, path, ancestors) => {
  switch (typeof value) {
    case 'undefined': case 'boolean': case 'number': case 'string': return value;
    case 'object': if (value === null) return value; break;
    default: problem = { path, what: describe(value) }; throw STOP;
  }
  // Deeper data is pathological, and the cap keeps the walk off the end of the stack.
  if (ancestors.length >= MAX_DEPTH) { problem = { path, what: 'data nested more than ' + MAX_DEPTH + ' levels deep' }; throw STOP; }
  for (let i = 0; i < ancestors.length; i++)
    if (ancestors[i] === value) { problem = { path, what: 'a reference to itself (a cycle)' }; throw STOP; }
  put(ancestors, ancestors.length, value);
  let copy;
  if (isArray(value)) {
    copy = [];
    const length = value.length;
    for (let i = 0; i < length; i++) put(copy, i, toPlain(value[i], path + '[' + i + ']', ancestors));
  } else {
    const proto = getPrototypeOf(value);
    if (proto !== objectPrototype && proto !== null) { problem = { path, what: describe(value) }; throw STOP; }
    copy = create(null);
    const names = keys(value);
    for (let i = 0; i < names.length; i++) copy[names[i]] = toPlain(value[names[i]], path + member(names[i]), ancestors);
  }
  ancestors.length = ancestors.length - 1;
  return copy;
};

// console: output is kept (bounded) and handed back with the variables.
const logs = [];
const format = (value) => {
  if (typeof value === 'string') return value;
  try { const json = stringify(value); if (json !== undefined) return json; } catch {}
  try { return toText(value); } catch { return '[unprintable]'; }
};
const log = freeze(function log(...values) {
  if (logs.length >= options.maxLogLines) return;
  let line = '';
  for (let i = 0; i < values.length; i++) line += (i === 0 ? '' : ' ') + format(values[i]);
  put(logs, logs.length, line.length > options.maxLogChars ? line.slice(0, options.maxLogChars) + '…' : line);
});
const console = freeze({ log, info: log, warn: log, error: log, debug: log });
defineProperty(g, 'console', { value: console, writable: true, enumerable: false, configurable: true });

// The hooks the wrapped code calls: read-only, so the code's own declarations cannot replace them.
let captured = null, thrown = null;
const capture = (names, thunks) => {
  const found = create(null);
  const depth = ErrorCtor.stackTraceLimit;
  ErrorCtor.stackTraceLimit = 0; // most names are unbound: their ReferenceErrors need no stack
  try {
    for (let i = 0; i < names.length; i++) {
      try { found[names[i]] = thunks[i](); } catch {}
    }
  } finally { ErrorCtor.stackTraceLimit = depth; }
  captured = found;
  return found;
};
const fail = (error) => {
  let name = '', message = '', line;
  try {
    if (error !== null && (typeof error === 'object' || typeof error === 'function')) {
      const ownName = error.name, ownMessage = error.message, stack = error.stack;
      name = typeof ownName === 'string' ? ownName : '';
      message = typeof ownMessage === 'string' ? ownMessage : format(error);
      const at = typeof stack === 'string' ? codeLine.exec(stack) : null;
      if (at !== null) line = +at[1] - ${WRAPPED_LINE_OFFSET};
    } else message = format(error);
  } catch { message = 'the code threw a value that could not be described'; }
  thrown = { name, message, line };
};
const hook = (value) => ({ value, writable: false, enumerable: false, configurable: false });
defineProperty(g, '${CAPTURE_HOOK}', hook(capture));
defineProperty(g, '${FAIL_HOOK}', hook(fail));

const stub = (namespace, fn, awaited) => {
  const label = namespace + '.' + fn;
  return { [fn](...args) {
    const copies = [];
    for (let i = 0; i < args.length; i++) {
      try { put(copies, i, toPlain(args[i], '', [])); } catch (error) {
        if (error !== STOP) throw error;
        throw new TypeErrorCtor(label + ': argument ' + (i + 1) + (problem.path ? ' at ' + problem.path : '') +
          ' is ' + problem.what + ', which cannot leave the sandbox');
      }
    }
    const reply = awaited
      ? asyncDispatch.applySyncPromise(undefined, [namespace, fn, copies], { arguments: { copy: true } })
      : dispatch(namespace, fn, copies);
    if (reply.ok) return reply.value;
    throw new ErrorCtor(reply.message);
  } }[fn];
};
const UNCOPYABLE = freeze(create(null));
let uncopyable = null;
const plainOr = (value, place) => {
  try { return toPlain(value, place.path, []); } catch (error) {
    if (error !== STOP) throw error;
    uncopyable = { ok: false, problem: 'uncopyable', ...place, path: problem.path, what: problem.what };
    throw UNCOPYABLE;
  }
};
const builtin = create(null);
const before = getOwnPropertyNames(g);
for (let i = 0; i < before.length; i++) builtin[before[i]] = true;

// Defines the variables and namespaces, evaluates, and answers; a context runs once.
return function run(scope, layout, source, mode) {
  const exposed = create(null);
  for (let i = 0; i < layout.length; i++) exposed[layout[i][0]] = true;
  const scopeNames = keys(scope);
  for (let i = 0; i < scopeNames.length; i++) {
    const name = scopeNames[i];
    if (exposed[name]) continue;
    try { defineProperty(g, name, { value: scope[name], writable: true, enumerable: true, configurable: true }); }
    catch (error) { // a read-only global such as undefined or NaN
      return { ok: false, problem: 'thrown', name: 'TypeError', message: 'variable "' + name + '" cannot be defined: ' + error.message, logs };
    }
  }
  for (let i = 0; i < layout.length; i++) {
    const namespace = layout[i][0], fns = layout[i][1], awaited = layout[i][2], api = {};
    for (let j = 0; j < fns.length; j++) defineProperty(api, fns[j], { value: freeze(stub(namespace, fns[j], awaited)), enumerable: true });
    defineProperty(g, namespace, { value: freeze(api), writable: false, enumerable: false, configurable: false });
  }

  let value;
  try { value = indirectEval(source); } catch (error) {
    // The code's own throws are caught inside the source; what arrives here did not parse as wrapped.
    if (error instanceof SyntaxErrorCtor) return { ok: false, problem: 'syntax', message: error.message };
    fail(error);
  }
  if (thrown !== null) return { ok: false, problem: 'thrown', ...thrown, logs };
  try {
    if (mode === 'expression') return { ok: true, value: plainOr(value, { path: '' }), scope: {}, logs };
    const variables = create(null), seen = create(null);
    const read = (name, isScopeVariable) => {
      if (seen[name] || exposed[name] || (builtin[name] && !isScopeVariable)) return;
      seen[name] = true;
      let value;
      if (captured !== null && name in captured) {
        value = captured[name];
        // The global object inherits Object.prototype: 'constructor' or 'toString' in the code resolve there.
        if (!isScopeVariable && !hasOwn(g, name) && name in g && g[name] === value) return;
      } else if (hasOwn(g, name)) value = g[name];
      else return;
      variables[name] = plainOr(value, { variable: name, path: name });
    };
    for (let i = 0; i < scopeNames.length; i++) read(scopeNames[i], true);
    const after = getOwnPropertyNames(g);
    for (let i = 0; i < after.length; i++) read(after[i], false);
    if (captured !== null) {
      const names = keys(captured);
      for (let i = 0; i < names.length; i++) read(names[i], false);
    }
    // After the variables: an assignment's value is also the completion value, and naming the variable helps more.
    return { ok: true, value: plainOr(value, { path: '' }), scope: variables, logs };
  } catch (error) {
    if (error === UNCOPYABLE) return uncopyable;
    fail(error);
    return { ok: false, problem: 'thrown', ...thrown, logs };
  }
};
`;
