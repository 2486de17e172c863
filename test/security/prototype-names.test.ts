/**
 * Names users choose (nodes, variables) key tables in the state. Names that are also properties of
 * every JavaScript object (`constructor`, `toString`, `__proto__`) must be names like any other.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStateFile } from '../../src/store/conversation-journal.js';
import { loadState, saveState } from '../../src/engine/state.js';
import { converse, fileOf, graphOf, noScript } from '../support/agents.js';
import { runCli } from '../support/run-cli.js';

const NAMES = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'];

describe('nodes named like Object.prototype members', () => {
  it.each(NAMES)('count the visits of a node named %s, and the state reads back', async (name) => {
    const graph = graphOf([
      { name: 'start1', action: 'chat_exact', instruction: 'Hi.', transitions: [name] },
      { name, action: 'chat_exact', instruction: 'Again.', transitions: [`${name}`] },
    ]);
    const { state, said } = await converse(graph, noScript, [undefined, 'x', 'y']);
    expect(said).toEqual(['Hi.', 'Again.', 'Again.']);
    expect(Object.hasOwn(state.visits, name)).toBe(true);
    expect(state.visits[name]).toBe(2);
    const reloaded = loadState(saveState(state));
    expect(Object.hasOwn(reloaded.visits, name)).toBe(true);
    expect(reloaded.visits[name]).toBe(2);
    expect(Object.hasOwn(reloaded.lastEntered, name)).toBe(true);
  });
});

describe('variables named like Object.prototype members', () => {
  it.each(NAMES)('a code node stores %s as a variable, and the next node reads it', async (name) => {
    const graph = graphOf([
      { name: 'start1', action: 'code', instruction: `var ${name} = 'kept';`, transitions: ['say'] },
      { name: 'say', action: 'chat_exact', instruction: `value: $${name}`, transitions: ['quit'] },
    ]);
    const { state, said } = await converse(graph, noScript, [undefined]);
    expect(said).toEqual(['value: kept']);
    const variables = state.stack[0]!.variables;
    expect(Object.hasOwn(variables, name)).toBe(true);
    const reloaded = loadState(saveState(state));
    expect(reloaded.stack[0]!.variables[name]).toBe('kept');
  });

  it('an unset variable named like a member is not found on the prototype', async () => {
    const graph = graphOf([
      { name: 'start1', action: 'chat_exact', instruction: 'value: $constructor', transitions: ['quit'] },
    ]);
    await expect(converse(graph, noScript, [undefined])).rejects.toThrow(
      'no variable "constructor" is in scope',
    );
  });
});

describe('a conversation with such nodes, saved with --state', () => {
  it('resumes in the next process', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'meta-agent-proto-'));
    try {
      const graphPath = join(dir, 'members.autogram.json');
      const graph = fileOf([
        { name: 'start1', action: 'chat_exact', instruction: 'Hi.', transitions: ['constructor'] },
        { name: 'constructor', action: 'chat_exact', instruction: 'Built.', transitions: ['__proto__'] },
        { name: '__proto__', action: 'chat_exact', instruction: 'Linked.', transitions: ['constructor'] },
      ]);
      await writeFile(graphPath, JSON.stringify(graph));
      const statePath = join(dir, 'chat.state');
      const first = await runCli(['chat', graphPath, '--state', statePath], { input: 'a\nb\n' });
      expect(first.stdout.trim().split('\n')).toEqual(['Hi.', 'Built.', 'Linked.']);
      const second = await runCli(['chat', graphPath, '--state', statePath], { input: 'c\n' });
      expect(second.stderr).not.toMatch(/not a meta-agent conversation state|bug/);
      expect(second.stdout.trim().split('\n').at(-1)).toBe('Built.');
      const state = await loadStateFile(statePath);
      expect(state?.visits['constructor']).toBe(2);
      expect(state?.visits['__proto__']).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
