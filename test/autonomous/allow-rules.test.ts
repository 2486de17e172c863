import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allowRulesPath, loadAllowRules, rememberAllowRule } from '../../src/autonomous/allow-rules.js';

const KNOWN = ['read_file', 'write_to_file', 'delete_file'];

async function workspace(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'allow-rules-'));
}

describe('allow rules remembered per workspace', () => {
  it('keeps an "always" answer in the reserved folder, and reads it back', async () => {
    const root = await workspace();
    await rememberAllowRule(root, [], 'write_to_file');
    await rememberAllowRule(root, ['write_to_file'], 'read_file');
    expect(allowRulesPath(root)).toBe(join(root, '.meta-agent', 'allow.json'));
    expect(JSON.parse(await readFile(allowRulesPath(root), 'utf8'))).toEqual({
      commands: ['read_file', 'write_to_file'],
    });
    expect(await loadAllowRules(root, KNOWN)).toEqual({ commands: ['read_file', 'write_to_file'] });
  });

  it('has no rules where none were remembered', async () => {
    expect(await loadAllowRules(await workspace(), KNOWN)).toEqual({ commands: [] });
  });

  it('ignores, and says so, names that are not commands of the run', async () => {
    const root = await workspace();
    await mkdir(join(root, '.meta-agent'));
    await writeFile(allowRulesPath(root), JSON.stringify({ commands: ['read_file', 'rm -rf', 42] }));
    expect(await loadAllowRules(root, KNOWN)).toEqual({
      commands: ['read_file'],
      problem: '2 unknown command name(s) ignored',
    });
  });

  it('grants nothing from a file that is not a rule list', async () => {
    const root = await workspace();
    await mkdir(join(root, '.meta-agent'));
    for (const text of ['{ not json', '["write_to_file"]', '{"commands": "write_to_file"}', 'null']) {
      await writeFile(allowRulesPath(root), text);
      const rules = await loadAllowRules(root, KNOWN);
      expect(rules.commands).toEqual([]);
      expect(rules.problem).toBeDefined();
    }
  });
});
