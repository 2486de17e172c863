/**
 * The JavaScript that prepares a context, once, and then runs every evaluation in it. It is source
 * text because it runs inside the isolate, where nothing of ours exists.
 *
 * Setup (`evalClosure`, before any user code, so nothing it captures has been tampered with) removes
 * the globals whose work would happen outside an evaluation's time or memory limit, pins
 * `Error.prepareStackTrace`, installs a collecting `console`, the two hooks the wrapped code calls and
 * the exposed namespaces, then freezes every builtin: what one evaluation does to `Array.prototype` or
 * `Math` cannot reach the next, which is what makes one context safe to reuse. It returns `run`.
 *
 * `run(scope, source, mode, waits, …)` is the evaluation, in one call under one time limit; `scope` comes
 * as JSON text where JSON carries it exactly (parsing it costs less than isolated-vm's copy). It first
 * undoes what the last evaluation left where freezing cannot reach: the global object (code's `var`
 * and bare assignments land there), RegExp.prototype (left unfrozen for speed), the last regular
 * expression match and `Error.stackTraceLimit`. What it cannot undo it answers as `tampered`, for the
 * host to start over in a fresh context. It then defines the scope variables, evaluates the wrapped
 * source with an indirect `eval` (global code, exactly as a script; the only way to hold the
 * completion value without a second call), and builds the answer out of fresh plain objects and
 * arrays, so that copying it to the host runs no JavaScript at all (isolated-vm copies with
 * JavaScript disallowed), and sends it as JSON text where JSON carries it exactly (no undefined, NaN,
 * infinity or -0 in it), which the host reads faster than isolated-vm copies an object. The guest
 * captures the functions it needs at setup, so code that tampers with what is left unfrozen can
 * distort only its own evaluation's answer.
 *
 * After a code node, `ahead` may bring the boolean conditions that follow it: each is then evaluated
 * in the same call, as its own evaluation (undoing, defining, evaluating, under a time limit of its
 * own), which spares a call into the isolate for each; each is compiled once, as a function.
 */
import { WATCH_GENERATION } from './watchdog.js';
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
  | {
      ok: true;
      value: unknown;
      scope: Record<string, unknown>;
      logs: string[];
      /** The conditions `ahead` came to (see `run`), when it was given. */
      ahead?: ConditionOutcome[];
    }
  | GuestFailure;

/** An evaluation that failed. */
export type GuestFailure =
  | { ok: false; problem: 'thrown'; name: string; message: string; line?: number; logs: string[] }
  | { ok: false; problem: 'syntax'; message: string }
  | ({ ok: false; problem: 'uncopyable' } & UncopyablePlace)
  | { ok: false; problem: 'tampered' };

/** A condition evaluated after a code node: whether it holds, or how it failed. */
export type ConditionOutcome = { ok: true; holds: boolean } | GuestFailure;

/**
 * The boolean conditions to evaluate after a code node, in the same call: `sources`, each an arrow
 * function's text (wrapCondition), compiled once; `names`, every variable they name, which they read
 * from the code's changes where it made one.
 */
export interface Ahead {
  sources: string[];
  names: string[];
}

/** What the host function dispatcher answers a call from inside. */
export type HostReply = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * Parameters: $0 the synchronous host dispatcher (a function), $1 the asynchronous one (a Reference,
 * which never leaves this closure), $2 GuestOptions, $3 the namespaces (NamespaceLayout[]), $4 the
 * watchdog's shared buffer. Returns `run(scope, source, mode, waits, ahead, readBack)`; `waits`: the
 * code may call asynchronous namespaces (the call into the isolate is asynchronous, so the isolate may
 * wait for the host); `ahead`: JSON text of an Ahead, or undefined; `readBack`: how many of `scope`'s
 * variables are the code's own (the others are its conditions').
 */
export const GUEST_SETUP = String.raw`'use strict';
const dispatch = $0, asyncDispatch = $1, options = $2, layout = $3;
// The watchdog's shared state, and Atomics.add, held before Atomics goes.
const watched = new Int32Array($4), atomicAdd = Atomics.add, WATCH_GENERATION = ${WATCH_GENERATION};
const g = globalThis, indirectEval = g.eval, parse = JSON.parse;
const { create, defineProperty, freeze, getOwnPropertyDescriptor, getOwnPropertyNames, getOwnPropertySymbols,
  getPrototypeOf, hasOwn, is, isExtensible, keys, preventExtensions } = Object;
const { apply, deleteProperty, ownKeys } = Reflect;
const isArray = Array.isArray, objectPrototype = Object.prototype;
const ErrorCtor = Error, SyntaxErrorCtor = SyntaxError, TypeErrorCtor = TypeError;
const stringify = JSON.stringify, toText = String, regexpExec = RegExp.prototype.exec;
// RegExp.prototype stays unfrozen (see below): the guest matches through the exec it holds.
const matches = (pattern, text) => apply(regexpExec, pattern, [text]) !== null;
const identifier = /^[A-Za-z_$][\w$]*$/, vowel = /^[AEIOU]/, anything = /(?:)/;
// A stack frame in the user's code; not the origin of an \`eval at …\` frame, whose line V8 gives unadjusted.
const codeLine = /\bat (?:.*? \()?${CODE_FILENAME.replace('.', '\\.')}:(\d+):\d+\)?$/m;

// Cleanup callbacks, waitAsync and wasm compilation run later, outside any evaluation's time limit;
// wasm memory is not counted against the isolate's memory limit.
for (const name of ['FinalizationRegistry', 'Atomics', 'SharedArrayBuffer', 'WebAssembly']) delete g[name];
defineProperty(ErrorCtor, 'prepareStackTrace', { value: undefined, writable: false, enumerable: false, configurable: false });

const put = (array, index, value) =>
  defineProperty(array, index, { value, writable: true, enumerable: true, configurable: true });
const member = (key) => (matches(identifier, key) ? '.' + key : '[' + stringify(key) + ']');
const an = (noun) => (matches(vowel, noun) ? 'an ' : 'a ') + noun;
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
// is not plain data, leaving where in 'problem'. It clears 'exact' on a value JSON would not carry as it
// is (undefined, NaN, the infinities, -0).
const STOP = freeze(create(null)), MAX_DEPTH = 1000;
let problem = null, exact = true;
const toPlain = (value, path, ancestors) => {
  switch (typeof value) {
    case 'boolean': case 'string': return value;
    case 'undefined': exact = false; return value;
    case 'number':
      if (value !== value || value === 1 / 0 || value === -1 / 0 || (value === 0 && 1 / value < 0)) exact = false;
      return value;
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

// console: output is kept (bounded) and handed back with the variables; each evaluation starts a new list.
let logs = [];
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
      const at = typeof stack === 'string' ? apply(regexpExec, codeLine, [stack]) : null;
      if (at !== null) line = +at[1] - ${WRAPPED_LINE_OFFSET};
    } else message = format(error);
  } catch { message = 'the code threw a value that could not be described'; }
  thrown = { name, message, line };
};
const hook = (value) => ({ value, writable: false, enumerable: false, configurable: false });
defineProperty(g, '${CAPTURE_HOOK}', hook(capture));
defineProperty(g, '${FAIL_HOOK}', hook(fail));

// The namespaces, read-only. An asynchronous one may only be called while the host waits for it.
let mayWait = false;
const stub = (namespace, fn, awaited) => {
  const label = namespace + '.' + fn;
  return { [fn](...args) {
    if (awaited && !mayWait)
      throw new ErrorCtor(label + ' waits for the host, so only code that names ' + namespace + ' may call it');
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
// A scope variable named as a namespace is its data for one evaluation, read through it beside its
// functions, which come first (the AIPL state's values, aipl.ns.key, beside aipl.set). It is never
// handed back: the namespace is read-only, so what code does to the copy stays in the evaluation.
let namespaceData = create(null);
const dataOf = (namespace, key) => {
  const data = namespaceData[namespace];
  return data !== null && typeof data === 'object' && hasOwn(data, key) ? data : undefined;
};
const exposed = create(null);
for (let i = 0; i < layout.length; i++) {
  const namespace = layout[i][0], fns = layout[i][1], awaited = layout[i][2], api = {};
  exposed[namespace] = true;
  for (let j = 0; j < fns.length; j++) defineProperty(api, fns[j], { value: freeze(stub(namespace, fns[j], awaited)), enumerable: true });
  const withData = new Proxy(freeze(api), {
    get(target, key) { return hasOwn(target, key) ? target[key] : (dataOf(namespace, key) ?? target)[key]; },
    has(target, key) { return key in target || dataOf(namespace, key) !== undefined; },
  });
  defineProperty(g, namespace, { value: withData, writable: false, enumerable: false, configurable: false });
}

// Only redefining a property (defineProperty and its kin) can make a global non-enumerable or an
// accessor, which the quick check before each evaluation does not look for: these note that they
// were called, and the next check is a thorough one. A proxy keeps them looking native.
let redefined = false;
const noteCalls = (object, name) => {
  object[name] = new Proxy(object[name], { apply(target, self, args) { redefined = true; return apply(target, self, args); } });
};
noteCalls(Object, 'defineProperty');
noteCalls(Object, 'defineProperties');
noteCalls(Reflect, 'defineProperty');
noteCalls(ErrorCtor, 'captureStackTrace');
noteCalls(objectPrototype, '__defineGetter__');
noteCalls(objectPrototype, '__defineSetter__');

// A frozen prototype would refuse code assigning a property of the same name to its own objects
// (this.name = … in an Error subclass, counts[word] = … for the word 'constructor'), as if the
// property were read-only. These properties become accessors whose setter defines the property on
// the object assigned to, which is what assigning there does when the prototype is not frozen.
const keepAssignable = (object, names) => {
  for (let i = 0; i < names.length; i++) {
    const name = names[i], property = getOwnPropertyDescriptor(object, name);
    if (property === undefined || !hasOwn(property, 'value')) continue;
    const value = property.value;
    defineProperty(object, name, {
      get() { return value; },
      set(assigned) {
        if (this === object) throw new TypeErrorCtor("Cannot assign to read only property '" + name + "' of a builtin prototype");
        if (this === null || (typeof this !== 'object' && typeof this !== 'function')) return;
        defineProperty(this, name, { value: assigned, writable: true, enumerable: true, configurable: true });
      },
      enumerable: property.enumerable,
      configurable: false,
    });
  }
};
keepAssignable(objectPrototype, getOwnPropertyNames(objectPrototype));
keepAssignable(Function.prototype, ['constructor', 'bind', 'toString']);
for (const name of ['Error', 'AggregateError', 'EvalError', 'RangeError', 'ReferenceError', 'SuppressedError',
  'SyntaxError', 'TypeError', 'URIError'])
  if (typeof g[name] === 'function') keepAssignable(g[name].prototype, ['constructor', 'name', 'message', 'toString']);

// Every builtin is frozen: each object reachable from the global object by properties, accessors and
// prototypes, and the intrinsics only an instance leads to. Error keeps one writable property,
// stackTraceLimit, which each evaluation starts from afresh. RegExp.prototype stays as V8 made it:
// V8 runs regular expressions off their fast path (eight times slower) once its shape changes, so
// each evaluation checks it instead (see intact).
const regexpPrototype = RegExp.prototype;
const stackTraceLimit = ErrorCtor.stackTraceLimit;
const reached = new Set([g]), pending = [];
const reach = (value) => {
  if ((typeof value === 'object' || typeof value === 'function') && value !== null && !reached.has(value)) {
    reached.add(value);
    pending.push(value);
  }
};
const reachProperties = (object) => {
  const names = ownKeys(object);
  for (let i = 0; i < names.length; i++) {
    const property = getOwnPropertyDescriptor(object, names[i]);
    reach(property.value);
    reach(property.get);
    reach(property.set);
  }
};
const freezeAllBut = (object, writable) => {
  const names = ownKeys(object);
  for (let i = 0; i < names.length; i++)
    if (names[i] !== writable) defineProperty(object, names[i], hasOwn(getOwnPropertyDescriptor(object, names[i]), 'value')
      ? { writable: false, configurable: false } : { configurable: false });
  defineProperty(object, writable, { configurable: false });
  preventExtensions(object);
};
const instances = [function* () {}, async function () {}, async function* () {}, [][Symbol.iterator](),
  new Map().entries(), new Set().values(), ''[Symbol.iterator](), anything[Symbol.matchAll](''),
  [].values().map((x) => x), Iterator.from({ next() {} })];
if (typeof Intl === 'object' && typeof Intl.Segmenter === 'function') {
  const segments = new Intl.Segmenter().segment('');
  instances.push(segments, segments[Symbol.iterator]());
}
reachProperties(g);
reach(getPrototypeOf(g));
for (let i = 0; i < instances.length; i++) reach(getPrototypeOf(instances[i]));
while (pending.length > 0) {
  const object = pending.pop();
  reach(getPrototypeOf(object));
  reachProperties(object);
  if (object === ErrorCtor) freezeAllBut(object, 'stackTraceLimit');
  else if (object !== regexpPrototype) freeze(object);
}

// What the global object and RegExp.prototype are like now, before any evaluation.
const globalPrototype = getPrototypeOf(g), original = create(null), changeable = [];
const globalNames = ownKeys(g);
for (let i = 0; i < globalNames.length; i++) {
  const property = getOwnPropertyDescriptor(g, globalNames[i]);
  original[globalNames[i]] = property;
  if (property.configurable) changeable.push(globalNames[i]);
}
const regexpNames = ownKeys(regexpPrototype), regexpProperties = [];
for (let i = 0; i < regexpNames.length; i++) regexpProperties.push(getOwnPropertyDescriptor(regexpPrototype, regexpNames[i]));
const sameProperty = (now, was) => now !== undefined && is(now.value, was.value) && now.get === was.get &&
  now.set === was.set && now.writable === was.writable && now.enumerable === was.enumerable &&
  now.configurable === was.configurable;

// Whether the builtins on the global object still hold their values. Reading them as plain names is
// fast: V8 caches the global property cells; reading \`g[name]\` is not, once globals come and go.
// A deleted one throws a ReferenceError.
const changeableValues = [], valueReads = [];
for (let i = 0; i < changeable.length; i++)
  if (typeof changeable[i] === 'string' && matches(identifier, changeable[i])) {
    valueReads.push(changeable[i] + ' === values[' + changeableValues.length + ']');
    changeableValues.push(original[changeable[i]].value);
  }
const readsAll = changeableValues.length === changeable.length;
const sameValues = indirectEval('(function (values) { try { return ' + valueReads.join(' && ') + '; } catch { return false; } })');

// Puts back every builtin on the global object that differs; false when one cannot be put back.
const restoreBuiltins = () => {
  for (let i = 0; i < changeable.length; i++) {
    const name = changeable[i], now = getOwnPropertyDescriptor(g, name);
    if (sameProperty(now, original[name])) continue;
    if (now !== undefined && !now.configurable) return false;
    defineProperty(g, name, original[name]);
  }
  return true;
};

// Deletes the global properties in \`names\` that setup did not make, but for those named in \`keep\`
// (variables the coming evaluation assigns again); false when one will not go. Answers 'builtin'
// when one of setup's is among them.
const removeAdded = (names, keep) => {
  let builtin = false;
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    if (original[name] !== undefined) builtin = true;
    else if (!(keep !== null && hasOwn(keep, name)) && !deleteProperty(g, name)) return false;
  }
  return builtin ? 'builtin' : true;
};

// Undoes what the last evaluation did to the global object; false when it left something that cannot
// be undone (a property it made permanent, a frozen global object…). Code that only assigned, declared
// and deleted changed only enumerable properties (setup's are not) and values, which the quick way
// finds; after code that redefined a property, every property is compared. The variables of the
// coming evaluation stay: a plain property assigned again costs less than one deleted and defined.
const resetGlobals = (scope, thorough) => {
  if (getPrototypeOf(g) !== globalPrototype || !isExtensible(g)) return false;
  if (thorough) return removeAdded(ownKeys(g), null) !== false && restoreBuiltins();
  const named = removeAdded(keys(g), scope), symbols = removeAdded(getOwnPropertySymbols(g), null);
  if (named === false || symbols === false) return false;
  return (named === true && symbols === true && readsAll && sameValues(changeableValues)) || restoreBuiltins();
};

// resetGlobals for a condition evaluated right after a code node in the same call (see conditionsAfter),
// when that code redefined no property. Such a condition names neither the global object nor code made
// from strings (the host passes no other), so what it can reach of the global object is the globals it
// names and the builtins: those are undone, and the globals the code added under other names are left
// for the next evaluation to remove, which spares enumerating the global object once more.
const resetNamed = (scope, named) => {
  if (getPrototypeOf(g) !== globalPrototype || !isExtensible(g)) return false;
  for (let i = 0; i < named.length; i++) {
    const name = named[i];
    if (!hasOwn(scope, name) && original[name] === undefined && hasOwn(g, name) && !deleteProperty(g, name)) return false;
  }
  return (readsAll && sameValues(changeableValues)) || restoreBuiltins();
};

// Whether RegExp.prototype is as it was. Without a redefinition, code could only have assigned,
// added or deleted properties there (its accessors have no setters).
const regexpSymbolCount = getOwnPropertySymbols(regexpPrototype).length;
const regexpData = [], regexpValues = [], regexpAccessors = [];
for (let i = 0; i < regexpNames.length; i++)
  if (hasOwn(regexpProperties[i], 'value')) {
    regexpData.push(regexpNames[i]);
    regexpValues.push(regexpProperties[i].value);
  } else regexpAccessors.push(regexpNames[i]);
const intact = (thorough) => {
  if (!isExtensible(regexpPrototype) || getPrototypeOf(regexpPrototype) !== objectPrototype) return false;
  if (thorough) {
    if (ownKeys(regexpPrototype).length !== regexpNames.length) return false;
    for (let i = 0; i < regexpNames.length; i++)
      if (!sameProperty(getOwnPropertyDescriptor(regexpPrototype, regexpNames[i]), regexpProperties[i])) return false;
    return true;
  }
  if (keys(regexpPrototype).length !== 0 || getOwnPropertySymbols(regexpPrototype).length !== regexpSymbolCount) return false;
  for (let i = 0; i < regexpData.length; i++) if (regexpPrototype[regexpData[i]] !== regexpValues[i]) return false;
  for (let i = 0; i < regexpAccessors.length; i++) if (!hasOwn(regexpPrototype, regexpAccessors[i])) return false;
  return true;
};

let uncopyable = null;
const UNCOPYABLE = freeze(create(null));
const plainOr = (value, place) => {
  try { return toPlain(value, place.path, []); } catch (error) {
    if (error !== STOP) throw error;
    uncopyable = { ok: false, problem: 'uncopyable', ...place, path: problem.path, what: problem.what };
    throw UNCOPYABLE;
  }
};

// Assigns a global. Its own function: the store's inline cache changes whenever a variable's property
// cell does (a variable deleted and defined again), and a change in evaluate's own would keep V8 from
// ever optimizing evaluate.
const assign = (name, value) => { g[name] = value; };

// Starts from the state setup left, defines the variables and evaluates: an outcome. An expression's
// outcome has its value only; a code node's also its variables.
const evaluate = (scope, source, mode, waits, readBack, named) => {
  const thorough = redefined;
  redefined = false;
  const reset = named !== undefined && !thorough ? resetNamed(scope, named) : resetGlobals(scope, thorough);
  if (!reset || !intact(thorough)) return { ok: false, problem: 'tampered' };
  ErrorCtor.stackTraceLimit = stackTraceLimit;
  matches(anything, ''); // forgets the last match, which RegExp.lastMatch and RegExp.$1… would show
  logs = [];
  captured = null;
  thrown = null;
  mayWait = waits;
  const scopeNames = keys(scope);
  namespaceData = create(null);
  for (let i = 0; i < scopeNames.length; i++) {
    const name = scopeNames[i];
    if (exposed[name]) { namespaceData[name] = scope[name]; continue; }
    // What setup did not make and resetGlobals kept is a plain variable of the last evaluation.
    if (original[name] === undefined && hasOwn(g, name)) { assign(name, scope[name]); continue; }
    try { defineProperty(g, name, { value: scope[name], writable: true, enumerable: true, configurable: true }); }
    catch (error) { // a read-only global such as undefined or NaN
      return { ok: false, problem: 'thrown', name: 'TypeError', message: 'variable "' + name + '" cannot be defined: ' + error.message, logs };
    }
  }

  let value;
  try { value = typeof source === 'function' ? source() : indirectEval(source); } catch (error) {
    // The code's own throws are caught inside the source; what arrives here did not parse as wrapped.
    if (error instanceof SyntaxErrorCtor) return { ok: false, problem: 'syntax', message: error.message };
    fail(error);
  }
  if (thrown !== null) return { ok: false, problem: 'thrown', ...thrown, logs };
  exact = true;
  try {
    if (mode === 'expression') return { ok: true, value: plainOr(value, { path: '' }), scope: {}, logs };
    const variables = create(null), seen = create(null);
    const read = (name, isScopeVariable) => {
      if (seen[name] || exposed[name] || (original[name] !== undefined && !isScopeVariable)) return;
      seen[name] = true;
      let value;
      if (captured !== null && name in captured) {
        value = captured[name];
        // The global object inherits Object.prototype: 'constructor' or 'toString' in the code resolve there.
        if (!isScopeVariable && !hasOwn(g, name) && name in g && g[name] === value) return;
      } else if (hasOwn(g, name)) value = g[name];
      else return;
      // A variable still holding the primitive passed in need not travel back: the host has it.
      if (isScopeVariable && typeof value !== 'object' && is(value, scope[name])) return;
      variables[name] = plainOr(value, { variable: name, path: name });
    };
    // The first \`readBack\` variables are the code's own; those after are the conditions' (see run).
    const own = readBack ?? scopeNames.length;
    for (let i = 0; i < own; i++) read(scopeNames[i], true);
    for (let i = own; i < scopeNames.length; i++) seen[scopeNames[i]] = true;
    // Code that redefined no property added only enumerable ones.
    const after = redefined ? getOwnPropertyNames(g) : keys(g);
    for (let i = 0; i < after.length; i++) read(after[i], false);
    if (captured !== null) {
      const names = keys(captured);
      for (let i = 0; i < names.length; i++) read(names[i], false);
    }
    // After the variables: an assignment's value is also the completion value, and naming the variable
    // helps more. No value is an absent one, which JSON carries.
    if (value === undefined) return { ok: true, scope: variables, logs };
    return { ok: true, value: plainOr(value, { path: '' }), scope: variables, logs };
  } catch (error) {
    if (error === UNCOPYABLE) return uncopyable;
    fail(error);
    return { ok: false, problem: 'thrown', ...thrown, logs };
  }
};

// The conditions that follow a code node, evaluated in the same call (see run): in order, while none
// holds, each as its own evaluation would see it, over the variables the host would pass it once the
// code's changes are in: those of \`given\` (JSON text) with the code's changes \`changed\`, copied
// afresh. Each counts as a new evaluation for the watchdog, so each has the time limit of its own that
// it would have had. One entry a condition evaluated, the last the first that holds or fails; none for
// one that found the context tampered with, which the host evaluates afresh itself.
const conditionsAfter = (ahead, given, changed) => {
  const results = [];
  for (let i = 0; i < ahead.sources.length; i++) {
    atomicAdd(watched, WATCH_GENERATION, 1);
    const scope = parse(given), names = ahead.names;
    for (let j = 0; j < names.length; j++)
      if (hasOwn(changed, names[j])) {
        const copy = toPlain(changed[names[j]], '', []);
        if (names[j] === '__proto__') put(scope, names[j], copy);
        else scope[names[j]] = copy;
      }
    const outcome = evaluate(scope, conditionFunction(ahead, i), 'expression', false, undefined, names);
    if (!outcome.ok && outcome.problem === 'tampered') break;
    const holds = outcome.ok && !!outcome.value;
    results[results.length] = outcome.ok ? { ok: true, holds } : outcome; // Array.prototype is frozen
    if (holds || !outcome.ok) break;
  }
  return results;
};

// The function of condition \`i\` of \`ahead\`, compiled on its first evaluation and kept with it, frozen
// (an arrow has no prototype, and frozen it can carry nothing from one evaluation to the next).
const conditionFunction = (ahead, i) => {
  ahead.functions ??= [];
  return (ahead.functions[i] ??= freeze(indirectEval(ahead.sources[i])));
};

// One call: the evaluation, and for a code node the conditions \`ahead\` (JSON text of an Ahead), when the
// host passes them; \`given\` (JSON text then) holds the code's variables (the first \`readBack\`, which
// alone are read back) and the conditions', which each condition starts from afresh. The answer comes as JSON text
// when JSON carries it exactly (the host reads a string faster than isolated-vm copies an object); an
// expression's value but a string or an object comes bare, which saves an answer.
let lastAhead = '', lastAheadParsed = null; // a loop passes the same conditions at every pass
return function run(given, source, mode, waits, ahead, readBack) {
  const outcome = evaluate(typeof given === 'string' ? parse(given) : given, source, mode, waits, readBack);
  if (!outcome.ok) return outcome;
  const answerExact = exact;
  if (ahead !== undefined) {
    if (ahead !== lastAhead) {
      lastAheadParsed = parse(ahead);
      lastAhead = ahead;
    }
    outcome.ahead = conditionsAfter(lastAheadParsed, given, outcome.scope);
  }
  if (mode === 'expression' && typeof outcome.value !== 'object' && typeof outcome.value !== 'string') return outcome.value;
  return answerExact ? stringify(outcome) : outcome;
};
`;
