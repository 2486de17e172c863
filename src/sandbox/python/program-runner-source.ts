/**
 * The Python half of running a workspace program (execute_python_file), run once when the runtime has
 * loaded, beside runner-source.ts. `_meta_agent_run_program` runs /workspace/PATH as `python PATH` would:
 * as `__main__` in a module of its own, cwd /workspace, `sys.argv == [PATH]`, its folder first on
 * `sys.path`, stdin empty; stdout and stderr go to one bounded buffer (its first and last half kept).
 * It answers the exit status: 0, SystemExit's code, or 1 after the traceback an uncaught exception
 * prints (the runner's own frame left out).
 *
 * The runtime serves every Python sandbox of the process, so a program meets nothing of what ran before
 * it and leaves nothing for what runs next: before and after it, the runtime's modules are put back as
 * they were when it loaded (modules imported since are forgotten, attributes set on modules such as
 * builtins, sys or json are restored), with argv, path, cwd, environment, recursion limit and tracing.
 * Its files are the child's (program-child.ts): /workspace and /tmp are mounted afresh for each run.
 */
export const PROGRAM_RUNNER_SOURCE = String.raw`
import builtins as _p_builtins, io as _p_io, json as _p_json, linecache as _p_linecache
import os as _p_os, sys as _p_sys, traceback as _p_traceback, types as _p_types


class _ProgramOutput(_p_io.RawIOBase):
    """Keeps the first head and the last tail bytes written, and counts the rest."""

    def __init__(self, head, tail):
        self.head_room, self.tail_room = head, tail
        self.head, self.tail, self.written = bytearray(), bytearray(), 0

    def writable(self):
        return True

    def write(self, data):
        data = bytes(data)
        size = len(data)
        self.written += size
        room = self.head_room - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.tail_room:
                del self.tail[:len(self.tail) - self.tail_room]
        return size

    def text(self):
        cut = self.written - len(self.head) - len(self.tail)
        middle = f'\n[… {cut} bytes of output cut …]\n' if cut > 0 else ''
        return self.head.decode('utf-8', 'replace') + middle + self.tail.decode('utf-8', 'replace')


def _p_stream(raw):
    return _p_io.TextIOWrapper(raw, encoding='utf-8', errors='backslashreplace', write_through=True)


def _p_exit_status(error, stderr):
    code = error.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=stderr)
    return 1


def _p_snapshot():
    modules = dict(_p_sys.modules)
    return {
        'modules': modules,
        'dicts': {name: dict(vars(module)) for name, module in modules.items() if hasattr(module, '__dict__')},
        'argv': list(_p_sys.argv),
        'path': list(_p_sys.path),
        'cwd': _p_os.getcwd(),
        'environ': dict(_p_os.environ),
        'recursion': _p_sys.getrecursionlimit(),
    }


def _p_restore(saved):
    for name in [name for name in _p_sys.modules if name not in saved['modules']]:
        del _p_sys.modules[name]
    _p_sys.modules.update(saved['modules'])
    for name, before in saved['dicts'].items():
        now = vars(saved['modules'][name])
        for key in [key for key in now if key not in before]:
            del now[key]
        for key, value in before.items():
            if now.get(key, before) is not value:
                now[key] = value
    _p_sys.argv = list(saved['argv'])
    _p_sys.path[:] = saved['path']
    _p_os.chdir(saved['cwd'])
    _p_os.environ.clear()
    _p_os.environ.update(saved['environ'])
    _p_sys.setrecursionlimit(saved['recursion'])
    _p_sys.settrace(None)
    _p_sys.setprofile(None)
    _p_linecache.clearcache()


def _meta_agent_run_program(path, output_bytes):
    raw = _ProgramOutput(output_bytes // 2, output_bytes - output_bytes // 2)
    _p_restore(_P_LOADED)
    streams = _p_sys.stdout, _p_sys.stderr, _p_sys.stdin
    status, memory = 1, False
    try:
        stdout, stderr = _p_stream(raw), _p_stream(raw)
        _p_sys.stdout, _p_sys.stderr, _p_sys.stdin = stdout, stderr, _p_io.StringIO('')
        full = '/workspace/' + path
        _p_sys.argv = [path]
        # Bytecode caches would come back as workspace files the user never asked for.
        _p_sys.dont_write_bytecode = True
        _p_sys.path.insert(0, _p_os.path.dirname(full))
        _p_os.chdir('/workspace')
        main = _p_types.ModuleType('__main__')
        main.__file__ = full
        main.__builtins__ = _p_builtins
        _p_sys.modules['__main__'] = main
        try:
            with open(full, 'rb') as file:
                code = compile(file.read(), full, 'exec')
            exec(code, vars(main))
            status = 0
        except SystemExit as error:
            status = _p_exit_status(error, stderr)
        except BaseException as error:
            memory = isinstance(error, MemoryError)
            trace = error.__traceback__
            while trace is not None and trace.tb_frame.f_code is _meta_agent_run_program.__code__:
                trace = trace.tb_next
            _p_traceback.print_exception(type(error), error, trace, file=stderr)
            status = 1
        stdout.flush()
        stderr.flush()
    finally:
        _p_sys.stdout, _p_sys.stderr, _p_sys.stdin = streams
        _p_restore(_P_LOADED)
    return _p_json.dumps({'status': status, 'output': raw.text(), 'memory': memory})


def _meta_agent_programs_start_here():
    '''Takes the runtime as it is now, set up, as what each program starts from.'''
    global _P_LOADED
    _P_LOADED = _p_snapshot()
    # Taken before it had a name, the snapshot would take itself out of this module when put back.
    _P_LOADED['dicts']['__main__']['_P_LOADED'] = _P_LOADED
`;
