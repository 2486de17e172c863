/**
 * What an agent may write into its own graph: edits are bounded in size and number, and code that does
 * not parse is refused when written, like any other lint error.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { saveState } from '../../src/engine/state.js';
import { VersionedGraph } from '../../src/graph/versioned.js';
import type { NodeSpecInput } from '../../src/graph/schema.js';
import { converse, fileOf, noScript } from '../support/agents.js';
import { runCli } from '../support/run-cli.js';

/** A self-referential graph whose first node runs `code`, then says what it left in `result`. */
function agentRunning(code: string, extra: NodeSpecInput[] = []): VersionedGraph {
  return new VersionedGraph(
    fileOf(
      [
        { name: 'start1', action: 'code', instruction: code, transitions: ['report'] },
        { name: 'report', action: 'chat_exact', instruction: '$result', transitions: ['quit'] },
        ...extra,
      ],
      { selfReferential: true },
    ),
  );
}

describe('self-edits that would make the graph too large', () => {
  it('are refused, and the conversation stays small enough to save', async () => {
    const graph = agentRunning(
      `var result = 'kept';
       for (let i = 0; i < 20; i++) {
         try { self.updateNode('report', { notes: 'x'.repeat(1_000_000) }); }
         catch (error) { result = error.message; }
       }`,
    );
    const { said, state } = await converse(graph, noScript, [undefined], { selfReferential: true });
    expect(said[0]).toContain('updating node "report" refused');
    expect(said[0]).toContain('more than config.selfEditLimits.maxNodeChars (20000)');
    expect(graph.version).toBe(0);
    expect(saveState(state).length).toBeLessThan(100_000);
  });

  it('stop at the graph size limit, node by node', async () => {
    const graph = agentRunning(
      `var result = '';
       try {
         for (let i = 0; i < 20; i++)
           self.addNode({ name: 'n' + i, action: 'chat', instruction: 'x'.repeat(15_000), transitions: ['report'] });
       } catch (error) { result = error.message; }`,
    );
    graph.config.selfEditLimits.maxGraphChars = 50_000;
    const { said } = await converse(graph, noScript, [undefined], { selfReferential: true });
    expect(said[0]).toContain('more than config.selfEditLimits.maxGraphChars (50000)');
    expect(graph.version).toBe(3);
  });

  it('that shrink a graph already past its limits are allowed', async () => {
    const graph = agentRunning(`self.updateNode('long', { notes: '' }); var result = 'shrunk';`, [
      { name: 'long', action: 'chat', notes: 'x'.repeat(1000), transitions: ['report'] },
    ]);
    graph.config.selfEditLimits.maxNodeChars = 100;
    graph.config.selfEditLimits.maxGraphChars = 100;
    const { said } = await converse(graph, noScript, [undefined], { selfReferential: true });
    expect(said[0]).toBe('shrunk');
    expect(graph.version).toBe(1);
  });
});

describe('refused self-edits', () => {
  it('count toward editsPerTurn, so retrying a refusal forever ends', async () => {
    const graph = agentRunning(
      `var result = '';
       for (let i = 0; i < 1000; i++) {
         try { self.addNode({ name: 'start1', action: 'chat', transitions: ['report'] }); }
         catch (error) { result = error.message; }
       }`,
    );
    const { said } = await converse(graph, noScript, [undefined], { selfReferential: true });
    expect(said[0]).toContain('this turn already tried 20 edits');
  });
});

describe('code that does not parse', () => {
  it('is refused when a self-edit writes it into a code node', async () => {
    const graph = agentRunning(
      `var result = '';
       try { self.addNode({ name: 'broken', action: 'code', instruction: 'if (', transitions: ['report'] }); }
       catch (error) { result = error.message; }`,
    );
    const { said } = await converse(graph, noScript, [undefined], { selfReferential: true });
    expect(said[0]).toMatch(
      /adding node "broken" refused: broken: instruction is not valid JavaScript: SyntaxError/,
    );
    expect(graph.get('broken')).toBeUndefined();
  });

  it('is refused when a self-edit writes it into a boolean condition', async () => {
    const graph = agentRunning(
      `var result = '';
       try { self.updateNode('report', { booleanCondition: 'a ==== b' }); }
       catch (error) { result = error.message; }`,
    );
    const { said } = await converse(graph, noScript, [undefined], { selfReferential: true });
    expect(said[0]).toContain('booleanCondition is not valid JavaScript');
    expect(graph.version).toBe(0);
  });

  it('fails validation of a graph file, naming the node', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'meta-agent-syntax-'));
    try {
      const path = join(dir, 'broken.autogram.json');
      const file = fileOf([
        { name: 'start1', action: 'code', instruction: 'let x = ;', transitions: ['quit'] },
      ]);
      await writeFile(path, JSON.stringify(file));
      const result = await runCli(['validate', path]);
      expect(result.code).toBe(1);
      expect(result.stdout + result.stderr).toMatch(
        /start1.*instruction is not valid JavaScript: SyntaxError/,
      );
      expect(result.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
