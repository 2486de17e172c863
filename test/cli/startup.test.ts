import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

// Preloaded into the CLI's process: lists on stderr, at exit, the npm packages the process loaded.
const RECORD_PACKAGES = `
import { registerHooks } from 'node:module';
const seen = new Set();
registerHooks({
  load(url, context, next) {
    const match = /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url);
    if (match) seen.add(match[1]);
    return next(url, context);
  },
});
process.on('exit', () => process.stderr.write(\`packages: \${[...seen].sort().join(' ')}\\n\`));
`;

async function packagesLoadedBy(args: string[]): Promise<string[]> {
  const hook = `data:text/javascript,${encodeURIComponent(RECORD_PACKAGES)}`;
  const { code, stderr } = await runCli(args, { env: { NODE_OPTIONS: `--import=${hook}` } });
  expect(code).toBe(0);
  const line = /^packages: (.*)$/m.exec(stderr);
  if (!line) throw new Error(`no package list on stderr:\n${stderr}`);
  return line[1]!.split(' ').filter(Boolean);
}

describe('meta-agent start-up', () => {
  it('prints its help with commander alone: a command loads its implementation when it runs', async () => {
    expect(await packagesLoadedBy(['--help'])).toEqual(['commander']);
  });

  it('validates a JSON graph without the model client, the sandbox, Graphviz or the CSV parser', async () => {
    expect(await packagesLoadedBy(['validate', 'meta/designer.autogram.json'])).toEqual(['commander', 'zod']);
  });
});
