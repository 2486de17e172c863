/**
 * A workspace program and code nodes share the process's Python runtime: neither meets what the other
 * left behind (files of the runtime's memory, module attributes, imported modules), the real runtime
 * and the real workspace jail at work.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PythonSandbox } from '../../src/sandbox/index.js';
import { pythonRuntime } from '../../src/sandbox/python/python-runtime.js';
import { WorkspacePython } from '../../tools/python-files.js';
import { Workspace } from '../../tools/workspace.js';

const where = { node: 'check' };

describe('execute_python_file in the shared Python runtime', () => {
  it('shows a program nothing a code node left, and a code node nothing a program left', async () => {
    const root = await mkdtemp(join(tmpdir(), 'python-files-'));
    await writeFile(
      join(root, 'look.py'),
      [
        'import math, os, sys',
        'print(getattr(math, "from_node", None), "statistics" in sys.modules, sorted(os.listdir(".")), os.listdir("/tmp"), os.path.exists("/home/pyodide/node.txt"))',
        'math.from_program = True',
        'import json',
        'json.dumps = None',
      ].join('\n'),
    );
    await writeFile(join(root, 'taint.py'), 'open("/home/pyodide/left.txt", "w").write("x")\n');
    const python = new WorkspacePython(await Workspace.open(root), 5000, 64);
    const sandbox = PythonSandbox.create({ timeoutMs: 5000 });

    await sandbox.runCode(
      [
        'import math, statistics',
        'math.from_node = True',
        'open("/tmp/node.txt", "w").write("node")',
        'open("/home/pyodide/node.txt", "w").write("node")',
      ].join('\n'),
      {},
      where,
    );
    const look = await python.run('look.py');
    expect(look.output).toBe("None False ['look.py', 'taint.py'] [] False\n");
    expect(await sandbox.evaluate('getattr(math, "from_program", None)', {}, where)).toBeNull();
    expect((await sandbox.runCode('import json\ntext = json.dumps([1])', {}, where)).value).toBe('[1]');

    const starts = pythonRuntime().starts;
    expect((await python.run('taint.py')).ended).toEqual({ status: 0, memory: false });
    expect(await sandbox.evaluate('__import__("os").path.exists("/home/pyodide/left.txt")', {}, where)).toBe(
      false,
    );
    expect(pythonRuntime().starts).toBe(starts + 1);
  }, 120_000);

  it('caps what a program writes to the memory it may use: files there are memory too', async () => {
    const root = await mkdtemp(join(tmpdir(), 'python-files-'));
    await writeFile(
      join(root, 'fill.py'),
      'chunk = b"x" * (16 * 1024 * 1024)\nfor i in range(100):\n    open(f"/tmp/{i}", "wb").write(chunk)\n',
    );
    const python = new WorkspacePython(await Workspace.open(root), 10_000, 64);
    const filled = await python.run('fill.py');
    expect(filled.ended).toEqual({ status: 1, memory: false });
    expect(filled.output).toMatch(/OSError: \[Errno 51\] No space left on device\n$/);
  }, 120_000);
});
