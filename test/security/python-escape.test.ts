/**
 * Known routes out of a Python sandbox, each tried from inside a code node: Pyodide's bridges to
 * JavaScript (`js`, `pyodide.ffi`, `pyodide_js`), the standard library's doors to the operating system
 * (os, subprocess, ctypes, sockets), introspection walks, and the limits. Every attempt must fail inside
 * the sandbox or come back with a harmless value that shows nothing was reached, and the host must
 * answer the next evaluation as if nothing happened.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { VersionedGraph } from '../../src/graph/versioned.js';
import { PythonSandbox } from '../../src/sandbox/index.js';
import { fileOf, noModels } from '../support/agents.js';
import { failure, where } from '../sandbox/helpers.js';

/** A credential of the host process that Python must never see. */
const FAKE_KEY = 'sk-host-secret-never-in-python';
/** What Python sees of the file system: Pyodide's own, in memory. */
const PYODIDE_ROOT = ['dev', 'home', 'lib', 'proc', 'tmp'];

describe('escapes from the Python sandbox', () => {
  let sandbox: PythonSandbox;
  let server: Server;
  let port: number;
  let connections = 0;
  const hostCalls: unknown[] = [];
  const savedKey = process.env.OPENAI_API_KEY;

  beforeAll(async () => {
    // Set before the runtime starts, so a leak of the host's environment would show it.
    process.env.OPENAI_API_KEY = FAKE_KEY;
    server = createServer((_request, response) => response.end('reached'));
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    sandbox = PythonSandbox.create({ timeoutMs: 3000 });
    sandbox.expose('self', { addNode: (node: unknown) => void hostCalls.push(node) });
  });
  afterAll(async () => {
    sandbox.dispose();
    if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = savedKey;
    await new Promise((resolve) => server.close(resolve));
  });

  /** Runs `code` as a code node and returns its value. */
  async function run(code: string, scope: Record<string, unknown> = {}): Promise<unknown> {
    return (await sandbox.runCode(code, scope, where)).value;
  }

  /** The host still answers, with a fresh runtime if the last one died. */
  async function expectAlive(): Promise<void> {
    expect(await sandbox.evaluate('sum(range(n))', { n: 10 }, where)).toBe(45);
  }

  it('gives `import js` an empty object: no process, require, fetch or global object', async () => {
    const code = `
import js
names = ['process', 'require', 'fetch', 'globalThis', 'global', 'console', 'setTimeout', 'Function', 'WebAssembly']
found = [name for name in names if hasattr(js, name)]
del js
found`;
    expect(await run(code)).toEqual([]);
    const error = await failure(run('from js import process'));
    expect(error.message).toMatch(/ImportError: cannot import name 'process' from 'js'/);
    await expectAlive();
  });

  it('refuses to make code from strings through the constructor of any JavaScript function', async () => {
    const routes = [
      "create_proxy(lambda: 1).constructor.constructor('return process')()",
      "pyodide_js.loadPackage.constructor('return globalThis')()",
      "to_js([1]).constructor.constructor('return this')()",
      "pyodide_js._module.FS.open.constructor('return require')()",
    ];
    for (const route of routes) {
      const code = `import pyodide_js\nfrom pyodide.ffi import create_proxy, to_js\n${route}`;
      const error = await failure(run(code));
      expect(error.message).toMatch(/EvalError: Code generation from strings disallowed/);
    }
    await expectAlive();
  });

  it('runs no JavaScript from pyodide.code.run_js', async () => {
    const error = await failure(run("from pyodide.code import run_js\nrun_js('process.exit(0)')"));
    expect(error.message).toMatch(/ImportError: cannot import name 'eval' from 'js'/);
    await expectAlive();
  });

  it('finds no host object by walking pyodide_js, its _module, _api and their config', async () => {
    const code = `
import pyodide_js
def walk():
    api, module = pyodide_js._api, pyodide_js._module
    places = {'pyodide_js': pyodide_js, '_api': api, '_module': module, 'config': api.config, 'runtimeEnv': api.runtimeEnv}
    names = ['process', 'require', 'fetch', 'globalThis', 'Buffer', 'child_process', 'fs']
    return [f'{where}.{name}' for where, place in places.items() for name in names if hasattr(place, name)]
found = walk()
del pyodide_js
found`;
    expect(await run(code)).toEqual([]);
    await expectAlive();
  });

  it('reads no host file: open, os.listdir, mountNodeFS and a NODEFS mount of / see nothing of the host', async () => {
    for (const path of [
      '/etc/passwd',
      '/proc/self/environ',
      '/root/.bashrc',
      process.cwd() + '/package.json',
    ]) {
      const error = await failure(run(`open(${JSON.stringify(path)}).read()`));
      expect(error.message).toMatch(/FileNotFoundError|No such file/);
    }
    expect(await run('import os\nsorted(os.listdir("/"))')).toEqual(PYODIDE_ROOT);
    const mountNodeFS = await failure(run("import pyodide_js\npyodide_js.mountNodeFS('/mnt', '/etc')"));
    expect(mountNodeFS.message).toMatch(/hostPath '\/etc' does not exist/);
    // Emscripten's NODEFS reads through Node's fs: the permission model lets it read nothing of the host.
    const nodefs = `
import pyodide_js
from pyodide.ffi import to_js
def mount():
    module, plain = pyodide_js._module, pyodide_js._api.config.constructor.fromEntries
    module.FS.mkdirTree('/host')
    module.FS.mount(module.NODEFS, to_js({'root': '/'}, dict_converter=plain), '/host')
mount()`;
    expect((await failure(run(nodefs))).kind).toBe('runtime');
    const read = await failure(run("open('/host/etc/passwd').read()"));
    expect(read.message).toMatch(/FileNotFoundError/);
    await expectAlive();
  });

  it('starts no process: os.system kills only the runtime; subprocess, Popen and ctypes reach nothing more', async () => {
    const marker = `/tmp/meta-agent-python-escape-${process.pid}`;
    const system = await failure(run(`import os\nos.system('touch ${marker}')`));
    expect(system.message).toMatch(/Access to this API has been restricted/);
    expect(existsSync(marker)).toBe(false);
    await expectAlive();
    const subprocess = await failure(run(`import subprocess\nsubprocess.run(['touch', '${marker}'])`));
    expect(subprocess.message).toMatch(/OSError: .*emscripten does not support processes/);
    // Every walk through builtins' subclasses to the os module ends at the same os.system refused above.
    const walk = `
import os
def walk():
    classes = ().__class__.__base__.__subclasses__()
    wrap_close = [c for c in classes if c.__name__ == '_wrap_close'][0]
    popen = [c for c in classes if c.__name__ == 'Popen'][0]
    return [wrap_close.__init__.__globals__['system'] is os.system, popen.__module__]
walk()`;
    expect(await run(walk)).toEqual([true, 'subprocess']);
    // ctypes loads only the runtime's own WebAssembly (whose system is os.system's), never a host library.
    const ctypes = await failure(run("import ctypes\nctypes.CDLL('/lib/x86_64-linux-gnu/libc.so.6')"));
    expect(ctypes.message).toMatch(/OSError/);
    expect(existsSync(marker)).toBe(false);
    await expectAlive();
  });

  it('brings nothing back with sys.modules games: deleted, reloaded and reinserted modules', async () => {
    const code = `
import sys, importlib
del sys.modules['os']
import os
importlib.reload(os)
sys.modules['js'] = __import__('pyodide_js')
import js
found = [name for name in ('process', 'require', 'fetch') if hasattr(js, name)] + [k for k in os.environ if 'KEY' in k]
del js, os, sys, importlib
found`;
    expect(await run(code)).toEqual([]);
    await expectAlive();
  });

  it('reaches no network: sockets, urllib, pyfetch, js.fetch, loadPackage and Node sockets never connect', async () => {
    const url = `http://127.0.0.1:${port}/`;
    const socket = await failure(
      run(`import socket\ns = socket.socket()\ns.connect(('127.0.0.1', ${port}))`),
    );
    expect(socket.message).toMatch(/OSError/);
    const urllib = await failure(run(`import urllib.request\nurllib.request.urlopen('${url}').read()`));
    expect(urllib.message).toMatch(/URLError/);
    const openUrl = await failure(run(`import pyodide.http\npyodide.http.open_url('${url}')`));
    expect(openUrl.message).toMatch(/NameError: name 'XMLHttpRequest' is not defined/);
    expect((await failure(run('import js\njs.fetch'))).message).toMatch(/AttributeError: fetch/);
    // Promises started here never run: the child serves requests without returning to its event loop.
    const pending = `
import pyodide_js, pyodide.http
started = [
    str(pyodide.http.pyfetch('${url}')),
    str(pyodide_js.loadPackage('${url}x-1.0-py3-none-any.whl')),
    str(pyodide_js._api.loadBinaryFile('${url}')),
    str(pyodide_js.useNodeSockFS()),
]
del pyodide_js, pyodide
len(started)`;
    expect(await run(pending)).toBe(4);
    const afterNodeSockets = await failure(
      run(`import socket\ns = socket.socket()\ns.connect(('127.0.0.1', ${port}))`),
    );
    expect(afterNodeSockets.message).toMatch(/OSError/);
    await expectAlive();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(connections).toBe(0);
  });

  it("sees none of the host's environment variables", async () => {
    const code = `
import os, pyodide_js
seen = [dict(os.environ), pyodide_js._api.config.env.to_py(), pyodide_js._module.ENV.to_py()]
del os, pyodide_js
seen`;
    const seen = JSON.stringify(await run(code));
    expect(seen).not.toContain(FAKE_KEY);
    expect(seen).not.toContain('OPENAI_API_KEY');
    expect(seen).not.toContain(process.env.PATH!);
  });

  it('ends an infinite loop at the time limit; the next evaluation gets a new runtime', async () => {
    const started = performance.now();
    const error = await failure(run('while True:\n    pass'));
    expect(error.kind).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(10_000);
    await expectAlive();
  });

  it('answers a 4 GB and a 600 MB allocation with an error inside the sandbox', async () => {
    // Python's sizes are 32-bit in WebAssembly: 4 GB cannot even be asked for.
    const huge = await failure(run('x = bytearray(4 * 1024**3)'));
    expect(huge.message).toMatch(/OverflowError/);
    for (const code of ['x = bytearray(600 * 1024**2)', 'x = [0] * 2**30', 'x = bytearray(2**31 - 1)']) {
      const error = await failure(run(code));
      expect(error.kind).toBe('memory');
      expect(error.message).toMatch(/more than 64 MB/);
    }
    await expectAlive();
  });

  it('holds memory taken outside WebAssembly, as typed arrays made through the FFI, to the limit too', async () => {
    // 10 GB asked for in 512 MB JavaScript arrays, each written so that it is really held.
    const code = `
import pyodide_js
def hoard():
    Int8Array = pyodide_js._module.HEAP8.constructor
    kept = []
    for _ in range(20):
        kept.append(Int8Array.new(512 * 1024**2))
        kept[-1].fill(1)
    return len(kept)
hoard()`;
    const error = await failure(run(code));
    expect(error.kind).toBe('memory');
    await expectAlive();
  });

  it('stops deep recursion: RecursionError at the default limit, a dead runtime past the stack', async () => {
    const recursion = await failure(run('def f(n):\n    return f(n + 1)\nf(0)'));
    expect(recursion.message).toMatch(/RecursionError: maximum recursion depth exceeded/);
    await expectAlive();
    const overflow = await failure(
      run('import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return f(n + 1)\nf(0)'),
    );
    expect(overflow.kind).toBe('runtime');
    expect(overflow.message).toMatch(/the Python runtime failed/);
    await expectAlive();
  });

  it('caps what print floods: lines kept and each line cut', async () => {
    const lines = await sandbox.runCode("for i in range(100000):\n    print('x' * 100)", {}, where);
    expect(lines.logs).toHaveLength(1000);
    const long = await sandbox.runCode("print('y' * 1_000_000)", {}, where);
    expect(long.logs).toEqual([`${'y'.repeat(10_000)}…`]);
    await expectAlive();
  });

  it('refuses a huge return value within the memory limit', async () => {
    const error = await failure(run("'z' * (50 * 1024**2)"));
    expect(error.kind).toBe('memory');
    await expectAlive();
  });

  it('accepts no protocol line forged on stdout or on the protocol pipe: no answer for a later evaluation, no host call', async () => {
    const answer = (value: string) =>
      JSON.stringify({
        type: 'done',
        answer: JSON.stringify({ ok: true, value, changed: {} }),
        logs: [],
      });
    const call = JSON.stringify({
      type: 'host',
      namespace: 'self',
      fn: 'addNode',
      args: JSON.stringify([{ name: 'forged' }]),
    });
    // os.write(1, …) is Emscripten's stdout: it ends in the logs, as print does.
    const written = await sandbox.runCode(
      `import os\nos.write(1, ${pyBytes(answer('forged') + '\n')})\n'real'`,
      {},
      where,
    );
    expect(written.value).toBe('real');
    expect(written.logs).toEqual([answer('forged')]);
    // Emscripten's default terminal writes with console.log, to the child's real stdout, which the
    // protocol does not use: a forged host call, then a forged answer meant for the next evaluation.
    const onStdout = `
import pyodide_js
from pyodide.ffi import to_js
def forge(lines):
    plain = pyodide_js._api.config.constructor.fromEntries
    for line in lines:
        tty = to_js({'output': to_js(list(line.encode()))}, dict_converter=plain)
        pyodide_js._module.TTY.default_tty_ops.put_char(tty, 10)
forge(${JSON.stringify([call, answer('forged')])})
'real'`;
    expect((await sandbox.runCode(onStdout, {}, where)).value).toBe('real');
    // Emscripten's NODEFS writes to any real descriptor: the same lines on the protocol's answers pipe
    // lack the key.
    const onPipe = `
import pyodide_js
from pyodide.ffi import to_js
plain = pyodide_js._api.config.constructor.fromEntries
data = to_js(${pyBytes([call, answer('forged')].join('\n') + '\n')})
pyodide_js._module.NODEFS.stream_ops.write(to_js({'nfd': 4}, dict_converter=plain), data, 0, data.length, None)
'real'`;
    const error = await failure(run(onPipe));
    expect(error.message).toMatch(/broke its protocol/);
    expect(await sandbox.evaluate('"mine"', {}, where)).toBe('mine');
    expect(hostCalls).toEqual([]);
  });

  it("lends a graph's Python code node self, in self-referential mode, and nothing of the host", async () => {
    const escape = `
import js, os
reached = [hasattr(js, 'process'), os.environ.get('OPENAI_API_KEY'), sorted(os.listdir('/'))]
self.add_node(name='probe', action='chat_exact', instruction=str(reached), transitions=['quit'])
del js, os`;
    const file = fileOf(
      [
        { name: 'start1', action: 'code', instruction: escape, transitions: ['talk'] },
        { name: 'talk', action: 'chat_exact', instruction: 'Done.', transitions: ['quit'] },
      ],
      { selfReferential: true },
    );
    Object.assign(file.config, { language: 'python' });
    const graph = new VersionedGraph(file);
    const agent = await Interpreter.create({ graph, models: noModels });
    try {
      expect((await agent.reply(undefined)).reply).toBe('Done.');
      expect(graph.get('probe')?.instruction).toBe(`[False, None, ${pyList(PYODIDE_ROOT)}]`);
    } finally {
      agent.dispose();
    }
  });

  it("stops a graph's Python code node that reads a host file, and the agent's next step runs", async () => {
    const file = fileOf([
      {
        name: 'start1',
        action: 'code',
        instruction: "secret = open('/etc/passwd').read()",
        transitions: ['quit'],
      },
    ]);
    Object.assign(file.config, { language: 'python' });
    const agent = await Interpreter.create({ graph: new VersionedGraph(file), models: noModels });
    try {
      await expect(agent.reply(undefined)).rejects.toThrow(/FileNotFoundError/);
    } finally {
      agent.dispose();
    }
    await expectAlive();
  });
});

/** Python's str() of a list of strings. */
function pyList(items: string[]): string {
  return `[${items.map((item) => `'${item}'`).join(', ')}]`;
}

/** A Python bytes literal of `text`. */
function pyBytes(text: string): string {
  return `bytes(${JSON.stringify([...Buffer.from(text)])})`;
}
