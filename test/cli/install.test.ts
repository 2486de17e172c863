/**
 * The first steps of a new user: `npm install` on a Node that is too old, and putting the `meta-agent`
 * command on the PATH with `npm link` as the README's "Set up" says. Both run the real npm, offline, and
 * never touch the real global prefix.
 */
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command as a user's shell would: without the npm_* settings an enclosing `npm test` exports
 * (its own prefix among them) and without the caller's model settings.
 */
function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(npm_|OPENAI_|META_AGENT_)/i.test(name)) clean[name] = value;
  }
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: { ...clean, NO_COLOR: '1', ...env } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('npm link, as the README sets meta-agent up', () => {
  let prefix: string;
  let elsewhere: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    prefix = mkdtempSync(join(tmpdir(), 'meta-agent-prefix-'));
    elsewhere = mkdtempSync(join(tmpdir(), 'meta-agent-elsewhere-'));
    env = { PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH ?? ''}` };
    // --offline: linking a folder downloads nothing, and the test must fail rather than start to.
    const link = await run('npm', ['link', '--ignore-scripts', '--offline'], root, {
      npm_config_prefix: prefix,
    });
    expect(link, link.stderr).toMatchObject({ code: 0 });
  });
  afterAll(() => {
    // The prefix holds only links: removing it leaves the checkout alone.
    rmSync(prefix, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it('puts a meta-agent command on the PATH that runs this checkout', async () => {
    expect(realpathSync(join(prefix, 'bin', 'meta-agent'))).toBe(
      realpathSync(join(root, 'bin', 'meta-agent.js')),
    );
    const where = await run('sh', ['-c', 'command -v meta-agent'], elsewhere, env);
    expect(where.stdout.trim()).toBe(join(prefix, 'bin', 'meta-agent'));
    const version = await run('meta-agent', ['--version'], elsewhere, env);
    expect(version).toMatchObject({ code: 0, stdout: `${manifest.version}\n` });
  });

  it('designs and validates a graph in a directory outside the clone', async () => {
    const script = join(root, 'examples', 'quiz-designer.script.json');
    const design = await run(
      'meta-agent',
      ['design', 'a quiz bot', '--provider', 'scripted', '--script', script],
      elsewhere,
      env,
    );
    expect(design, design.stderr).toMatchObject({ code: 0 });
    const validate = await run('meta-agent', ['validate', 'quiz_bot.autogram.json'], elsewhere, env);
    expect(validate).toMatchObject({ code: 0 });
    expect(validate.stdout).toMatch(/^quiz_bot\.autogram\.json: \d+ nodes, 0 errors/m);
  });
});

describe('npm install on a Node older than 24', () => {
  it('stops before anything is fetched or compiled, saying which Node meta-agent needs', async () => {
    const project = mkdtempSync(join(tmpdir(), 'meta-agent-old-node-'));
    try {
      for (const file of ['package.json', 'package-lock.json', '.npmrc']) {
        copyFileSync(join(root, file), join(project, file));
      }
      // npm takes the Node version it checks "engines" against from process.version: this makes the
      // real npm, on the real project files, believe it runs on Node 22.
      const olderNode = join(project, 'node-22.cjs');
      writeFileSync(olderNode, "Object.defineProperty(process, 'version', { value: 'v22.12.0' });\n");
      // --dry-run and --ignore-scripts: should the guard ever go, this still installs and builds nothing.
      const install = await run('npm', ['install', '--offline', '--dry-run', '--ignore-scripts'], project, {
        NODE_OPTIONS: `--require=${olderNode}`,
      });
      expect(install.code).toBe(1);
      expect(install.stderr).toContain('Required: {"node":">=24"}');
      expect(install.stderr).toMatch(/Actual: +\{.*"node":"v22\.12\.0"/);
      expect(install.stderr).not.toMatch(/gyp|isolated-vm/);
      expect(existsSync(join(project, 'node_modules'))).toBe(false);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
