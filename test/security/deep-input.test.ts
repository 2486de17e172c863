/**
 * Input nested thousands deep, or a condition thousands of operators long, exhausted the stack of what
 * reads it (the AIPL parser, zod, the renderer) and ended as "looks like a bug" (exit 1). It is refused
 * up front instead, in one line that says where: the line and column of a template, the field of a
 * flow file.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meta-agent-deep-'));
  await writeFile(join(dir, 'rules.json'), JSON.stringify({ rules: [{ reply: 'fine' }] }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function file(name: string, text: string): Promise<string> {
  await writeFile(join(dir, name), text);
  return name;
}

/** `{"k":{"k":…VALUE…}}`, `depth` objects deep (built as text: JSON.stringify itself gives up first). */
function nestedObject(depth: number, value = '"leaf"'): string {
  return `${'{"k":'.repeat(depth)}${value}${'}'.repeat(depth)}`;
}

const run = (args: string[]) => runCli(args, { cwd: dir });

describe('an AIPL condition thousands of operators long', () => {
  const conditions = {
    'a run of 10,000 "!"': `${'!'.repeat(10_000)}a.b`,
    '10,000 "&&"': Array.from({ length: 10_001 }, () => 'a.b').join(' && '),
    '10,000 "||"': Array.from({ length: 10_001 }, () => 'a.b').join(' || '),
  };

  for (const [what, condition] of Object.entries(conditions)) {
    it(`is a syntax error at its line and column for aipl check: ${what}`, async () => {
      const name = await file('long.aipl', `Hello.\n((${condition}\nthe block\n)\n`);
      const result = await run(['aipl', 'check', name]);
      // check's own contract: 1 when a file does not parse, with FILE:LINE:COLUMN and a caret.
      expect(result.code).toBe(1);
      const [message, line, caret] = result.stdout.split('\n');
      expect(message).toBe(
        'long.aipl:2:3: this condition nests more than 256 levels deep (each "!", "&&", "||", comparison and call adds one): split it into smaller conditions',
      );
      // The excerpt is the part of the long line around the column, not 30,000 characters of it.
      expect(line!.length).toBeLessThan(200);
      expect(caret).toBe('  |   ^');
      expect(result.stderr).toBe('');
    });
  }

  it('is refused by aipl render in one line with exit 2', async () => {
    const name = await file('render.aipl', `((${'!'.repeat(10_000)}a.b\nthe block\n)\n`);
    const result = await run(['aipl', 'render', name]);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(
      'error: render.aipl:1:3: this condition nests more than 256 levels deep (each "!", "&&", "||", comparison and call adds one): split it into smaller conditions',
    );
    expect(result.stderr).not.toContain('looks like a bug');
  });

  it('still parses when it is long but shallow enough', async () => {
    const condition = Array.from({ length: 100 }, () => '!!a.b').join(' && ');
    const name = await file('fine.aipl', `((${condition}\nthe block\n)\n`);
    const result = await run(['aipl', 'check', name]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^fine\.aipl: ok, 0 updates, 1 block, 100 references/);
  });
});

describe('a flow file nested 2,000 deep', () => {
  const flowRun = (name: string, ...more: string[]) =>
    run(['flow', 'run', name, '--provider', 'scripted', '--script', 'rules.json', ...more]);

  it('is refused at load in one line naming the field (exit 2)', async () => {
    const name = await file(
      'deep.flow.json',
      `{"name":"deep","database":{"d":${nestedObject(2000)}},"nodes":[{"name":"a","prompt":"Go."}]}`,
    );
    const result = await flowRun(name);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'error: deep.flow.json: database.d.k.k.k.k… nests more than 100 levels deep\n' +
        'hint: objects and arrays in a file may nest at most 100 deep: flatten the value\n',
    );
    const validated = await run(['validate', name]);
    expect(validated.stdout + validated.stderr).toContain(
      'database.d.k.k.k.k… nests more than 100 levels deep',
    );
    expect(validated.stderr).not.toContain('looks like a bug');
  });

  it('names a deep fallback or answer schema too', async () => {
    const fallback = await file(
      'fallback.flow.json',
      `{"nodes":[{"name":"a","prompt":"Go.","afterQuery":{"code":"answer"},"fallback":${nestedObject(2000)}}]}`,
    );
    expect((await flowRun(fallback)).stderr).toMatch(
      /^error: fallback\.flow\.json: nodes\[0\]\.fallback\.k\.k\.k… nests/,
    );
    const schema = `${'{"type":"object","properties":{"k":'.repeat(2000)}{}${'}}'.repeat(2000)}`;
    const answer = await file(
      'schema.flow.json',
      `{"nodes":[{"name":"a","prompt":"Go.","afterQuery":{"schema":${schema}}}]}`,
    );
    const result = await flowRun(answer);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error: schema\.flow\.json: nodes\[0\]\.afterQuery\.schema\.properties\.k… nests/,
    );
  });

  it('is refused in a saved run too', async () => {
    const name = await file('plain.flow.json', '{"name":"plain","nodes":[{"name":"a","prompt":"Go."}]}');
    const state = await file(
      'plain.run.json',
      `{"format":"meta-agent/flow-run@1","flow":"plain","flowHash":"x","passes":0,"database":{"d":${nestedObject(2000)}},"last":{}}`,
    );
    const result = await flowRun(name, '--state', state);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(
      'error: plain.run.json: database.d.k.k.k.k… nests more than 108 levels deep',
    );
  });

  it('runs when nested as deep as a file may be', async () => {
    // The file's top level, `database` and `d` are three levels: 97 more make 100.
    const name = await file(
      'deepest.flow.json',
      `{"name":"deepest","database":{"d":${nestedObject(97)}},"nodes":[{"name":"a","prompt":"Go."}]}`,
    );
    const result = await flowRun(name, '--state', 'deepest.run.json');
    expect(result.stderr).not.toContain('error');
    expect(result.code).toBe(0);
    // What it saved loads again.
    expect((await flowRun(name, '--state', 'deepest.run.json')).code).toBe(0);
  });
});
