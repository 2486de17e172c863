/**
 * The Python half of the Python sandbox's child process, run once when the runtime has loaded. It
 * defines `_meta_agent_run`, which the child calls for every evaluation with JSON texts in and a JSON
 * text out, so that values cross the boundary as JSON and nothing else.
 *
 * A code node's statements run in a namespace of their own: the scope's variables, AutoGRAMS' modules
 * (`math`, `operator`, `functools`, `ast`: autograms/autogram_config.py PYTHON_IMPORTS), and the host's
 * namespaces (`self`, `memory`, …). The value of the code is that of its last statement when that is an
 * expression, or of the variable a last `x = …` assigns (AutoGRAMS evaluates `x = EXPR` as EXPR and stores
 * it: autograms/statement_interpreter.py). What changed comes back: new variables and those whose JSON
 * differs, in-place changes (`list.append(merged, x)`) included. Modules, functions and classes the code
 * made (and JavaScript objects it imported) are its own helpers and stay behind; any other value JSON cannot hold is an error naming it.
 */
export const RUNNER_SOURCE = String.raw`
import ast as _ast, builtins as _builtins, json as _json, sys as _sys, traceback as _traceback, types as _types
from time import perf_counter as _perf_counter
import math, operator, functools, ast
from pyodide.ffi import JsProxy as _JsProxy

_PRELOADED = {'math': math, 'operator': operator, 'functools': functools, 'ast': ast}
_compiled = {}
_COMPILED_KEPT = 256


class _Unjsonable(Exception):
    def __init__(self, name, value):
        self.name = name
        self.type_name = type(value).__name__


def _camel(name):
    head, *rest = name.split('_')
    return head + ''.join(part[:1].upper() + part[1:] for part in rest)


class _Namespace:
    """A host namespace: self.add_node(name='x') calls the host's addNode({name: 'x'})."""

    def __init__(self, name, functions, call):
        object.__setattr__(self, '_name', name)
        object.__setattr__(self, '_functions', frozenset(functions))
        object.__setattr__(self, '_call', call)

    def __getattr__(self, attr):
        fn = attr if attr in self._functions else _camel(attr)
        if fn not in self._functions:
            raise AttributeError(f"{self._name} has no function {attr!r}; it has: {', '.join(sorted(self._functions))}")
        call, name = self._call, self._name

        def host_function(*args, **kwargs):
            values = list(args)
            if kwargs:
                values.append({_camel(key): value for key, value in kwargs.items()})
            reply = _json.loads(call(name, fn, _dumps(values)))
            if not reply['ok']:
                raise RuntimeError(reply['error'])
            return reply['value']

        host_function.__name__ = attr
        return host_function

    def __setattr__(self, attr, value):
        raise AttributeError(f'{self._name} is read-only')

    def __dir__(self):
        return sorted(self._functions)

    def __repr__(self):
        return f'<host namespace {self._name}>'


# One encoder for every value: json.dumps with options makes a new one at each call, which was most of
# the time of an evaluation with many variables.
_dumps = _json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(',', ':')).encode


def _compile(mode, code):
    key = (mode, code)
    found = _compiled.get(key)
    if found is not None:
        return found
    if mode != 'code':
        found = (compile(code.strip(), '<code>', 'eval'), None, None)
    else:
        tree = _ast.parse(code, '<code>', 'exec')
        last = tree.body[-1] if tree.body else None
        if isinstance(last, _ast.Expr):
            body = _ast.Module(body=tree.body[:-1], type_ignores=[])
            found = (compile(body, '<code>', 'exec'), compile(_ast.Expression(last.value), '<code>', 'eval'), None)
        else:
            target = None
            if isinstance(last, _ast.Assign) and len(last.targets) == 1 and isinstance(last.targets[0], _ast.Name):
                target = last.targets[0].id
            elif isinstance(last, (_ast.AugAssign, _ast.AnnAssign)) and isinstance(last.target, _ast.Name):
                target = last.target.id
            found = (compile(tree, '<code>', 'exec'), None, target)
    if len(_compiled) >= _COMPILED_KEPT:
        _compiled.pop(next(iter(_compiled)))
    _compiled[key] = found
    return found


def _helper(value):
    return isinstance(value, (_types.ModuleType, _types.FunctionType, _types.BuiltinFunctionType, type, _Namespace, functools.partial, _JsProxy))


def _line(error):
    if isinstance(error, SyntaxError) and error.filename == '<code>':
        return error.lineno
    frames = [frame for frame in _traceback.extract_tb(error.__traceback__) if frame.filename == '<code>']
    return frames[-1].lineno if frames else None


def _failure(error):
    kind = 'syntax' if isinstance(error, SyntaxError) else 'memory' if isinstance(error, MemoryError) else 'runtime'
    if isinstance(error, _Unjsonable):
        return {'ok': False, 'kind': 'uncopyable', 'name': error.name, 'type': error.type_name}
    message = f'{type(error).__name__}: {error}' if str(error) else type(error).__name__
    if isinstance(error, SyntaxError):
        message = f'SyntaxError: {error.msg}'
    return {'ok': False, 'kind': kind, 'message': message, 'line': _line(error)}


def _meta_agent_run(mode, code, scope_text, namespaces_text, conditions_text):
    started = _perf_counter()
    call = _meta_agent_host_call
    try:
        scope = _json.loads(scope_text)
        namespace = {'__builtins__': _builtins, '__name__': '__main__', **_PRELOADED, **scope}
        # A lent namespace hides a variable of the same name, as in the JavaScript sandbox.
        for name, functions in _json.loads(namespaces_text).items():
            namespace[name] = _Namespace(name, functions, call)
        # Only lists and dicts can change in place; a string or number is unchanged while it is the same
        # object. An expression's changes are not read.
        mutable = (list, dict) if mode == 'code' else ()
        before = {name: _dumps(value) for name, value in scope.items() if isinstance(value, mutable)}
        body, last, target = _compile(mode, code)
        if mode == 'condition':
            value = bool(eval(body, namespace))
        elif mode == 'expression':
            value = eval(body, namespace)
        else:
            exec(body, namespace)
            value = eval(last, namespace) if last is not None else namespace.get(target) if target else None
        changed = {}
        if mode == 'code':
            for name, current in namespace.items():
                if name.startswith('__') or (name in _PRELOADED and current is _PRELOADED[name]) or _helper(current):
                    continue
                if name in scope and name not in before and current is scope[name]:
                    continue
                try:
                    text = _dumps(current)
                except (TypeError, ValueError, RecursionError):
                    raise _Unjsonable(name, current)
                if name in before:
                    unchanged = text == before[name]
                else:
                    unchanged = name in scope and text == _dumps(scope[name])
                if not unchanged:
                    changed[name] = current
        if _helper(value):
            value = None
        try:
            answer = '{"ok":true,"value":' + _dumps(value) + ',"changed":' + _dumps(changed)
        except (TypeError, ValueError, RecursionError):
            raise _Unjsonable('', value)
        if conditions_text:
            conditions = _conditions(_json.loads(conditions_text), {**scope, **changed}, started)
            answer += ',"conditions":' + _dumps(conditions)
        return answer + '}'
    except BaseException as error:
        return _dumps(_failure(error))


def _conditions(conditions, after, started):
    """The conditions after a code node, each as its own evaluation would see the variables: a fresh
    copy of them as the code left them (the last may have the code's own: nothing reads them after),
    with nothing lent. Up to the first that holds or fails. A phase that took a millisecond or more
    tells the parent, whose clock then starts again for the next (protocol.ts: lap); a quicker one
    leaves the next its limit less under a millisecond."""
    after_text = _dumps(after) if len(conditions) > 1 else None
    outcomes = []
    last = started
    for index, code in enumerate(conditions):
        now = _perf_counter()
        if now - last >= 0.001:
            _meta_agent_lap()
        last = now
        try:
            variables = after if index == len(conditions) - 1 else _json.loads(after_text)
            namespace = {'__builtins__': _builtins, '__name__': '__main__', **_PRELOADED, **variables}
            holds = bool(eval(_compile('condition', code)[0], namespace))
        except BaseException as error:
            outcomes.append(_failure(error))
            break
        outcomes.append({'ok': True, 'holds': holds})
        if holds:
            break
    return outcomes
`;
