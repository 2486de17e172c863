/**
 * execute_python_file through `meta-agent run`, a loopback model naming the programs: a workspace .py
 * file runs in the Python sandbox on a copy of the workspace, its changes come back through the jail,
 * and nothing outside the workspace is read or changed; a program that never ends is stopped and the
 * run goes on; tracebacks, exit codes and long output come back as the model needs them.
 */
import { mkdir, mkdtemp, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OpenAIServer } from '../support/openai-server.js';
import { startReplayServer, type ReplayStep } from '../support/replay-server.js';
import { commandResults, runCli, type RunCliOptions } from '../support/run-cli.js';
import { MAX_PYTHON_REPORT_CHARS } from '../../tools/execute-python-file.js';

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Command = Exclude<ReplayStep, (prompt: string) => unknown>;
const python = (file: string): Command => ({ name: 'execute_python_file', args: { file } });
const complete: Command = { name: 'task_complete', args: { reason: 'done' } };
const BEGIN = '=== BEGIN UNTRUSTED PROGRAM OUTPUT ===';
const END = '=== END UNTRUSTED PROGRAM OUTPUT ===';

/** Runs the goal loop over a workspace holding `files`, the model answering `steps`. */
async function run(
  files: Record<string, string | Uint8Array>,
  args: string[],
  steps: ReplayStep[],
  options: RunCliOptions = {},
  prepare?: (workspace: string) => Promise<void>,
) {
  const root = await mkdtemp(join(tmpdir(), 'run-python-'));
  const workspace = join(root, 'workspace');
  for (const [path, data] of Object.entries(files)) {
    await mkdir(dirname(join(workspace, path)), { recursive: true });
    await writeFile(join(workspace, path), data);
  }
  await prepare?.(workspace);
  server = await startReplayServer(steps, 'tools');
  const result = await runCli(
    [
      ...['run', '--goal', 'run the programs', '--no-memory', '--json', ...args],
      ...['--workspace', workspace, '--base-url', server.url, '--model', 'gpt-4o-mini'],
    ],
    options,
  );
  return { root, workspace, result, outputs: commandResults(result) };
}

/** What the program printed, between the fence's markers. */
function fenced(output: string): string {
  const begin = output.indexOf(BEGIN);
  const end = output.indexOf(END);
  expect(begin).toBeGreaterThan(-1);
  expect(end).toBeGreaterThan(begin);
  return output.slice(begin + BEGIN.length + 1, end - 1);
}

const ALLOW = ['--allow', 'execute_python_file'];
const BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

describe('meta-agent run: execute_python_file', () => {
  it('is asked for every time: --yes alone does not run it', async () => {
    const { workspace, outputs, result } = await run(
      { 'hello.py': 'open("hello.txt", "w").write("hi")\n' },
      ['--yes'],
      [python('hello.py'), complete],
    );
    expect(result.code).toBe(0);
    expect(outputs.map((step) => step.name)).toEqual(['task_complete']);
    await expect(readFile(join(workspace, 'hello.txt'))).rejects.toThrow(/ENOENT/);
    const told = server!
      .chatRequests()[1]!
      .messages.map((message) => message.content)
      .join('\n');
    expect(told).toContain(
      'execute_python_file runs a program, which always needs your approval, and there is no terminal to ask in: pass --allow execute_python_file to let it run',
    );
  });

  it('runs a program on the workspace files: it reads its input and its writes and deletions reach the workspace', async () => {
    const { workspace, outputs, result } = await run(
      {
        'data/numbers.txt': '3\n1\n2\n',
        'data/bytes.bin': BYTES,
        'old.txt': 'to be deleted',
        'lib/helper.py': 'def total(values):\n    return sum(values)\n',
        'tools/sort_numbers.py': [
          'import os, sys',
          'sys.path.insert(0, "lib")',
          'from helper import total',
          'numbers = sorted(int(line) for line in open("data/numbers.txt"))',
          'os.makedirs("out", exist_ok=True)',
          'with open("out/sorted.txt", "w") as f:',
          '    f.write("\\n".join(map(str, numbers)) + "\\n")',
          'data = open("data/bytes.bin", "rb").read()',
          'open("out/reversed.bin", "wb").write(data[::-1])',
          'os.remove("old.txt")',
          'open("/tmp/left-behind.txt", "w").write("from the first run")',
          'print("argv", sys.argv, "cwd", os.getcwd())',
          'print("sum", total(numbers), "bytes", len(data), data == bytes(range(256)))',
          'print("to stderr", file=sys.stderr)',
        ].join('\n'),
        'check.py': [
          'import os, sys',
          'print("tmp", os.listdir("/tmp"), "helper" in sys.modules)',
          'print("files", sorted(os.path.join(d, f) for d, _, fs in os.walk(".") for f in fs))',
        ].join('\n'),
      },
      ALLOW,
      [python('tools/sort_numbers.py'), python('check.py'), complete],
    );
    expect(result.code).toBe(0);
    const [sorted, check] = outputs;
    expect(sorted!.output).toMatch(/^Exit status 0\.\n/);
    expect(fenced(sorted!.output)).toBe(
      [
        "argv ['tools/sort_numbers.py'] cwd /workspace",
        'sum 6 bytes 256 True',
        'to stderr',
        'Files written: out/reversed.bin, out/sorted.txt.',
        'Files deleted: old.txt.',
      ].join('\n'),
    );
    expect(await readFile(join(workspace, 'out/sorted.txt'), 'utf8')).toBe('1\n2\n3\n');
    expect(new Uint8Array(await readFile(join(workspace, 'out/reversed.bin')))).toEqual(
      Uint8Array.from(BYTES).reverse(),
    );
    await expect(readFile(join(workspace, 'old.txt'))).rejects.toThrow(/ENOENT/);
    // The next run sees the workspace as it is now, and nothing else of the first run.
    expect(fenced(check!.output)).toBe(
      "tmp [] False\nfiles ['./check.py', './data/bytes.bin', './data/numbers.txt', './lib/helper.py', " +
        "'./out/reversed.bin', './out/sorted.txt', './tools/sort_numbers.py']",
    );
  });

  it('changes nothing outside the workspace: /tmp, ../x and host paths are its copy, a symlink out is not followed', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'run-python-outside-'));
    const secret = join(outside, 'secret.txt');
    await writeFile(secret, 'outside secret');
    const escape = [
      'import os',
      `for path in ["/tmp/x.txt", "../escaped.txt", ${JSON.stringify(secret)}, "/etc/passwd"]:`,
      '    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)',
      '    open(path, "w").write("written by the program")',
      '    print("wrote", path)',
      'try:',
      '    print(open("link.py").read())',
      'except OSError as error:',
      '    print("link.py:", type(error).__name__)',
      'os.makedirs(".meta-agent", exist_ok=True)',
      'open(".meta-agent/allow.json", "w").write("[]")',
      'open("inside.txt", "w").write("ok")',
    ].join('\n');
    const { workspace, outputs, result } = await run(
      { 'escape.py': escape },
      ALLOW,
      [python('escape.py'), python('link.py'), complete],
      {},
      (workspace) => symlink(secret, join(workspace, 'link.py')),
    );
    expect(result.code).toBe(0);
    const [escaped, linked] = outputs;
    expect(escaped!.output).toMatch(/^Exit status 0\.\n/);
    expect(fenced(escaped!.output)).toBe(
      [
        'wrote /tmp/x.txt',
        'wrote ../escaped.txt',
        `wrote ${secret}`,
        'wrote /etc/passwd',
        'link.py: FileNotFoundError',
        'Files written: inside.txt.',
        'Files not written back:',
        '- .meta-agent/allow.json: The path ".meta-agent/allow.json" is in .meta-agent, where the run keeps its own state; use another folder.',
      ].join('\n'),
    );
    expect(await readFile(secret, 'utf8')).toBe('outside secret');
    expect(await readFile('/etc/passwd', 'utf8')).not.toContain('written by the program');
    await expect(readFile(join(dirname(workspace), 'escaped.txt'))).rejects.toThrow(/ENOENT/);
    expect(await readlink(join(workspace, 'link.py'))).toBe(secret);
    expect(await readFile(join(workspace, 'inside.txt'), 'utf8')).toBe('ok');
    // As read_file does, the jail refuses the symlink out when it is named as the program.
    expect(linked!.ok).toBe(false);
    expect(linked!.output).toContain('leads outside the workspace');
  });

  it('stops a program that never ends and goes on; gives tracebacks, exit codes and the memory limit', async () => {
    const { outputs, result } = await run(
      {
        'forever.py': 'while True:\n    pass\n',
        'after.py': 'print("still here")\n',
        'fails.py':
          'def check(x):\n    if x > 1:\n        raise ValueError(f"too big: {x}")\n\nprint("checking")\ncheck(5)\n',
        'exits.py': 'import sys\nprint("partial")\nsys.exit(3)\n',
        'hungry.py': 'data = bytearray(400 * 1024 * 1024)\n',
      },
      ALLOW,
      [...['forever.py', 'after.py', 'fails.py', 'exits.py', 'hungry.py'].map(python), complete],
      { env: { META_AGENT_SANDBOX_TIMEOUT_MS: '2000', META_AGENT_SANDBOX_MEMORY_MB: '128' } },
    );
    expect(result.code).toBe(0);
    const [forever, after, fails, exits, hungry] = outputs.map((step) => step.output);
    expect(forever).toMatch(
      /^The program ran longer than 2 s and was stopped; the files it changed were not kept\.\n/,
    );
    expect(after).toMatch(/^Exit status 0\.\n/);
    expect(fenced(after!)).toBe('still here');
    expect(fails).toMatch(/^Exit status 1\.\n/);
    expect(fenced(fails!)).toBe(
      [
        'checking',
        'Traceback (most recent call last):',
        '  File "/workspace/fails.py", line 6, in <module>',
        '    check(5)',
        '    ~~~~~^^^',
        '  File "/workspace/fails.py", line 3, in check',
        '    raise ValueError(f"too big: {x}")',
        'ValueError: too big: 5',
      ].join('\n'),
    );
    expect(exits).toMatch(/^Exit status 3\.\n/);
    expect(fenced(exits!)).toBe('partial');
    expect(hungry).toMatch(/^Exit status 1\. It ran out of memory \(the limit is 128 MB\)\.\n/);
    expect(fenced(hungry!)).toMatch(/MemoryError$/);
  });

  it('keeps the beginning and the end of a long output', async () => {
    const { outputs } = await run({ 'loud.py': 'for i in range(100000):\n    print("line", i)\n' }, ALLOW, [
      // A long result leaves older steps in short in the prompt, where the replay counts steps: this
      // model goes by what its last result says instead.
      (prompt) => (prompt.includes('of output cut') ? complete : python('loud.py')),
    ]);
    const loud = outputs[0]!.output;
    expect(loud!.length).toBeLessThanOrEqual(MAX_PYTHON_REPORT_CHARS);
    expect(fenced(loud!)).toMatch(
      /^line 0\nline 1\n[^]*\n\[… \d+ bytes of output cut …\]\n[^]*line 99998\nline 99999$/,
    );
  });
});
