import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  allowedCommands,
  allowRulesPath,
  loadAllowRules,
  rememberAllowRule,
} from '../../src/autonomous/allow-rules.js';

const KNOWN = ['read_file', 'write_to_file', 'delete_file'];

function folder(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

describe('allow rules remembered per workspace, in the user’s configuration', () => {
  it('keeps an "always" answer in the configuration folder, under the workspace, and reads it back', async () => {
    const [root, config] = await Promise.all([folder('allow-ws-'), folder('allow-config-')]);
    await rememberAllowRule(root, [], 'write_to_file', config);
    await rememberAllowRule(root, ['write_to_file'], 'read_file', config);
    expect(allowRulesPath(config)).toBe(join(config, 'allow.json'));
    expect(JSON.parse(await readFile(allowRulesPath(config), 'utf8'))).toEqual({
      workspaces: { [root]: ['read_file', 'write_to_file'] },
    });
    expect(await loadAllowRules(root, KNOWN, config)).toEqual({ commands: ['read_file', 'write_to_file'] });
    expect(await loadAllowRules(await folder('allow-other-'), KNOWN, config)).toEqual({ commands: [] });
  });

  it('has no rules where none were remembered', async () => {
    expect(await loadAllowRules(await folder('allow-ws-'), KNOWN, await folder('allow-config-'))).toEqual({
      commands: [],
    });
  });

  it('ignores, and says so, names that are not commands of the run', async () => {
    const [root, config] = await Promise.all([folder('allow-ws-'), folder('allow-config-')]);
    await writeFile(
      allowRulesPath(config),
      JSON.stringify({ workspaces: { [root]: ['read_file', 'rm -rf', 42] } }),
    );
    expect(await loadAllowRules(root, KNOWN, config)).toEqual({
      commands: ['read_file'],
      problem: `${allowRulesPath(config)}: 2 unknown command name(s) ignored`,
    });
  });

  it('grants nothing from a file that is not a rule list', async () => {
    const [root, config] = await Promise.all([folder('allow-ws-'), folder('allow-config-')]);
    for (const text of ['{ not json', '["write_to_file"]', '{"commands": ["write_to_file"]}', 'null']) {
      await writeFile(allowRulesPath(config), text);
      const rules = await loadAllowRules(root, KNOWN, config);
      expect(rules.commands).toEqual([]);
      expect(rules.problem).toBeDefined();
    }
  });

  it('does not read an allow.json planted in the workspace, and says why', async () => {
    const [root, config] = await Promise.all([folder('allow-ws-'), folder('allow-config-')]);
    await mkdir(join(root, '.meta-agent'));
    await writeFile(join(root, '.meta-agent', 'allow.json'), JSON.stringify({ commands: ['delete_file'] }));
    const warnings: string[] = [];
    const allowed = await allowedCommands([], root, KNOWN, (message) => warnings.push(message), config);
    expect([...allowed]).toEqual([]);
    expect(warnings).toEqual([expect.stringContaining('a file in the workspace cannot allow commands')]);
  });

  it('trusts no rules from a configuration folder inside the workspace, where the agent can write', async () => {
    const root = await folder('allow-ws-');
    const config = join(root, '.config', 'meta-agent');
    await mkdir(config, { recursive: true });
    await writeFile(allowRulesPath(config), JSON.stringify({ workspaces: { [root]: ['delete_file'] } }));
    const rules = await loadAllowRules(root, KNOWN, config);
    expect(rules.commands).toEqual([]);
    expect(rules.problem).toMatch(/inside the workspace, where the agent can write/);
    await expect(rememberAllowRule(root, [], 'delete_file', config)).rejects.toThrow(/inside the workspace/);
  });
});
