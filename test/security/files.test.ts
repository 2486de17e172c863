/**
 * What saving does to what is already at the path: a FIFO or a device is written through, never
 * replaced; a symlink stays a link; a file keeps its permissions; crashed writers' temporary files go;
 * `-o -` is stdout; `design` never overwrites an earlier design unasked. The CLI cases run the built
 * CLI: `npx tsc -p .` first.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nameFrom } from '../../src/cli/actions/design.js';
import { loadState, newState, saveState } from '../../src/engine/state.js';
import { loadGraphFile, saveGraphFile, writeFileAtomic } from '../../src/graph/load.js';
import { graphFileSchema } from '../../src/graph/schema.js';
import { StaticGraph } from '../../src/graph/view.js';
import { loadScript } from '../../src/llm/scripted.js';
import { runCli } from '../support/run-cli.js';

const root = process.getuid?.() === 0;
/** Why a test that needs root, or needs not to be root, did not run here. */
const asRoot = root ? '' : ' (skipped: needs root)';
const notRoot = root ? ' (skipped: root may replace /dev/null)' : '';
const script = fileURLToPath(new URL('../../examples/quiz-designer.script.json', import.meta.url));
const graph = graphFileSchema.parse({
  name: 'g',
  nodes: [{ name: 'a', action: 'chat', instruction: 'Say hello.', transitions: ['a'] }],
});

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meta-agent-files-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function graphFile(): Promise<string> {
  const path = join(dir, 'g.autogram.json');
  await saveGraphFile(path, graph);
  return path;
}

/** The PID of a process that has ended. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

describe('writing to what is already there', () => {
  it('writes through a FIFO to the process reading it, and leaves it a FIFO', async () => {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const [read] = await Promise.all([readFile(fifo, 'utf8'), writeFileAtomic(fifo, 'through the pipe\n')]);
    expect(read).toBe('through the pipe\n');
    expect((await lstat(fifo)).isFIFO()).toBe(true);
    expect(await readdir(dir)).toEqual(['pipe']);
  });

  it.skipIf(!root)(`leaves a device a device: -o on a copy of /dev/null, as root${asRoot}`, async () => {
    // A device node of our own rather than /dev/null itself: a regression must not break the machine's.
    const devnull = join(dir, 'null');
    execFileSync('mknod', [devnull, 'c', '1', '3']);
    const result = await runCli(['export', await graphFile(), '-f', 'dot', '-o', devnull]);
    expect(result.stderr).not.toMatch(/^error:/m);
    expect(result.code).toBe(0);
    const after = await stat(devnull);
    expect(after.isCharacterDevice()).toBe(true);
    expect(after.rdev).toBe((await stat('/dev/null')).rdev);
    expect((await readdir(dir)).sort()).toEqual(['g.autogram.json', 'null']);
  });

  it.skipIf(root)(`writes -o /dev/null through, as a user who may not replace it${notRoot}`, async () => {
    const result = await runCli(['export', await graphFile(), '-f', 'dot', '-o', '/dev/null']);
    expect(result.code).toBe(0);
    expect((await stat('/dev/null')).isCharacterDevice()).toBe(true);
  });

  it('writes -o /dev/stdout into the pipe the CLI prints to', async () => {
    const result = await runCli(['export', await graphFile(), '-f', 'dot', '-o', '/dev/stdout']);
    expect(result.stderr).not.toMatch(/^error:/m);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^digraph "g" \{/);
  });

  it('prints to stdout for -o -, creating no file named "-"', async () => {
    const path = await graphFile();
    const result = await runCli(['export', path, '-o', '-'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^digraph "g" \{/);
    expect(result.stderr).not.toContain('wrote');
    const svg = await runCli(['export', path, '-f', 'svg', '-o', '-'], { cwd: dir });
    expect(svg.stdout).toMatch(/^<(\?xml|svg)/);
    expect(existsSync(join(dir, '-'))).toBe(false);
  });

  it('replaces the file a symlink points to, keeping the link', async () => {
    await mkdir(join(dir, 'real'));
    const target = join(dir, 'real', 'g.autogram.json');
    await writeFile(target, 'old');
    const link = join(dir, 'link.autogram.json');
    await symlink('real/g.autogram.json', link);
    await saveGraphFile(link, graph);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readlink(link)).toBe('real/g.autogram.json');
    expect((await loadGraphFile(target)).file.nodes).toEqual(graph.nodes);
    expect(await readdir(join(dir, 'real'))).toEqual(['g.autogram.json']);
  });

  it('creates the file a dangling symlink points to, keeping the link', async () => {
    const link = join(dir, 'link.autogram.json');
    await symlink('made.autogram.json', link);
    await saveGraphFile(link, graph);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect((await loadGraphFile(join(dir, 'made.autogram.json'))).file.name).toBe('g');
  });

  it('keeps the permissions of a chmod 600 graph file it saves', async () => {
    const path = await graphFile();
    await chmod(path, 0o600);
    await saveGraphFile(path, graph);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('keeps the permissions of a chmod 600 file that export -o replaces', async () => {
    const path = await graphFile();
    const out = join(dir, 'g.dot');
    await writeFile(out, 'old');
    await chmod(out, 0o600);
    const result = await runCli(['export', path, '-o', out]);
    expect(result.code).toBe(0);
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    expect(await readFile(out, 'utf8')).toMatch(/^digraph/);
  });

  it.skipIf(!root)(`keeps the owner of a file root saves, not root's${asRoot}`, async () => {
    const path = await graphFile();
    execFileSync('chown', ['65534:65534', path]);
    await saveGraphFile(path, graph);
    const after = await stat(path);
    expect([after.uid, after.gid]).toEqual([65534, 65534]);
  });

  it('refuses a folder as the file to write, saying so', async () => {
    await expect(writeFileAtomic(dir, 'x')).rejects.toThrow(`${dir}: cannot write: is a folder`);
  });

  it('says which folder is missing', async () => {
    const path = join(dir, 'missing', 'g.autogram.json');
    await expect(saveGraphFile(path, graph)).rejects.toThrow(
      `cannot write: the folder ${join(dir, 'missing')} does not exist`,
    );
  });

  it("removes crashed writers' temporary files of that target, and nothing else", async () => {
    const path = await graphFile();
    const dead = deadPid();
    const stale = `.g.autogram.json.${dead}.0badc0de.tmp`;
    const old = `.g.autogram.json.${process.pid}.00000001.tmp`;
    const live = `.g.autogram.json.${process.pid}.00000002.tmp`;
    const other = `.h.autogram.json.${dead}.0badc0de.tmp`;
    for (const name of [stale, old, live, other, 'notes.tmp']) await writeFile(join(dir, name), 'x');
    const hoursAgo = new Date(Date.now() - 2 * 3600_000);
    await utimes(join(dir, old), hoursAgo, hoursAgo);
    await saveGraphFile(path, graph);
    expect((await readdir(dir)).sort()).toEqual([live, other, 'g.autogram.json', 'notes.tmp'].sort());
  });
});

describe('reading a file with a UTF-8 byte order mark', () => {
  it('loads a JSON graph that starts with one', async () => {
    const path = join(dir, 'bom.autogram.json');
    await writeFile(path, `\ufeff${JSON.stringify(graph)}`);
    expect((await loadGraphFile(path)).file.nodes).toEqual(graph.nodes);
    const validated = await runCli(['validate', path]);
    expect(validated.stderr).not.toMatch(/^error:/m);
    expect(validated.code).toBe(0);
  });

  it('reads a conversation state and a rules file for the scripted provider that start with one', async () => {
    const state = saveState(newState(new StaticGraph(graph)));
    expect(loadState(`\ufeff${state}`).graphName).toBe(graph.name);
    const rules = join(dir, 'bom.script.json');
    await writeFile(rules, `\ufeff${JSON.stringify({ rules: [{ reply: 'hi' }] })}`);
    expect((await loadScript(rules)).source).toBe(rules);
  });
});

describe('naming a design', () => {
  function design(description: string, ...extra: string[]) {
    return runCli(['design', description, '-o', dir, '--provider', 'scripted', '--script', script, ...extra]);
  }

  it('gives a second design of the same description a free name, and says so', async () => {
    const first = await design('a quiz bot');
    expect(first.code).toBe(0);
    const written = await readFile(join(dir, 'quiz_bot.autogram.json'), 'utf8');
    const second = await design('a quiz bot');
    expect(second.stderr).not.toMatch(/^error:/m);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain(
      `note: ${join(dir, 'quiz_bot.autogram.json')} already exists: naming this design quiz_bot_2`,
    );
    expect(second.stdout).toMatch(/^designed quiz_bot_2 /);
    expect(await readFile(join(dir, 'quiz_bot.autogram.json'), 'utf8')).toBe(written);
    expect((await loadGraphFile(join(dir, 'quiz_bot_2.autogram.json'))).file.name).toBe('quiz_bot_2');
  });

  it('overwrites an earlier design with --force', async () => {
    const path = join(dir, 'quiz_bot.autogram.json');
    await writeFile(path, 'an earlier design');
    const result = await design('a quiz bot', '--force');
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('note:');
    expect((await loadGraphFile(path)).file.name).toBe('quiz_bot');
    expect(existsSync(join(dir, 'quiz_bot_2.autogram.json'))).toBe(false);
  });

  it('refuses a --name whose design exists, before any model call, unless --force', async () => {
    const path = join(dir, 'quiz.autogram.json');
    await writeFile(path, 'an earlier design');
    const result = await design('a quiz bot', '--name', 'quiz');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: ${path} already exists`);
    expect(result.stderr).toContain('hint: pass --force to overwrite it, or another --name');
    expect(await readFile(path, 'utf8')).toBe('an earlier design');
    expect(result.stderr).not.toContain('designing');
  });

  it('names a design described in Japanese in Japanese', async () => {
    const result = await design('家庭教師ボット');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^designed 家庭教師ボット /);
    expect(existsSync(join(dir, '家庭教師ボット.autogram.json'))).toBe(true);
  });

  it('makes names that say something in any script, and keeps numbers apart', () => {
    expect(nameFrom('a tutor bot that teaches fractions')).toBe('tutor_bot_teaches');
    expect(nameFrom('家庭教師ボット')).toBe('家庭教師ボット');
    expect(nameFrom('数学の家庭教師ボット、小学生向け')).toBe('数学の家庭教師ボット_小学生向け');
    expect(nameFrom('Бот-репетитор по математике')).toBe('бот_репетитор_по');
    expect(nameFrom('un café à Paris')).toBe('un_cafe_paris');
    expect(nameFrom('ＦＵＬＬ width Bot')).toBe('full_width_bot');
    expect(nameFrom('a tutor bot number 1')).toBe('tutor_bot_number_1');
    expect(nameFrom('a tutor bot number 8')).toBe('tutor_bot_number_8');
    expect(nameFrom('!!!')).toBe('agent');
    expect(nameFrom('🤖🤖')).toBe('agent');
    expect([...nameFrom('ボ'.repeat(100))]).toHaveLength(40);
  });
});
