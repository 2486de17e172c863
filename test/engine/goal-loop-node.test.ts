/**
 * goal_loop nodes in the engine: the node's lines, variables embedded, go to the `goals` host namespace
 * (lent here by the test, through the same door code nodes use), and what it returns is the node's
 * output. The goal loop itself is the CLI's to lend (test/cli/goal-loop-node.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { variablesInScope } from '../../src/engine/frames.js';
import { Interpreter, NodeError, type HostNamespace } from '../../src/engine/interpreter.js';
import { UserError } from '../../src/errors.js';
import { toDot } from '../../src/export/dot.js';
import { toMermaid } from '../../src/export/mermaid.js';
import { graphToCsv } from '../../src/graph/csv.js';
import { lintGraph } from '../../src/aipl/lint.js';
import type { NodeSpecInput } from '../../src/graph/schema.js';
import { csvGraph, fileOf, graphOf, noModels } from '../support/agents.js';

/** A `goals` namespace that records what it was asked and answers like the goal loop's. */
function recordingGoals(answer: (request: unknown) => unknown = () => finished) {
  const requests: unknown[] = [];
  const namespace: HostNamespace = {
    awaited: true,
    functions: {
      run: async (request: unknown) => {
        requests.push(request);
        return answer(request);
      },
    },
  };
  return { requests, namespace };
}

const finished = { complete: true, reason: 'task_complete', detail: 'poem.txt written', steps: 2 };

/** A conversation that sets variables in code, runs `plan` (goal_loop), then says `$result`. */
function planGraph(setup: string, goals: string): NodeSpecInput[] {
  return [
    { name: 'start1', action: 'code', instruction: setup, transitions: ['plan'] },
    { name: 'plan', action: 'goal_loop', instruction: `result = ${goals}`, transitions: ['say'] },
    { name: 'say', action: 'chat_exact', instruction: 'Done: $result', transitions: ['quit'] },
  ];
}

async function withInterpreter<T>(
  nodes: NodeSpecInput[],
  host: Record<string, HostNamespace>,
  body: (agent: Interpreter) => Promise<T>,
): Promise<T> {
  const agent = await Interpreter.create({ graph: graphOf(nodes), models: noModels, host });
  try {
    return await body(agent);
  } finally {
    agent.dispose();
  }
}

describe('goal_loop nodes', () => {
  it('sends the instruction lines, variables embedded, as goals and stores the result in its variable', async () => {
    const goals = recordingGoals();
    const nodes = planGraph(
      "topic = 'autumn'; file = 'poem.txt'",
      'Write a haiku about $topic\n\n   Save it to $file  \nShut down when done',
    );
    await withInterpreter(nodes, { goals: goals.namespace }, async (agent) => {
      const { reply, state } = await agent.reply(undefined);
      expect(goals.requests).toEqual([
        { goals: ['Write a haiku about autumn', 'Save it to poem.txt', 'Shut down when done'], node: 'plan' },
      ]);
      expect(variablesInScope(state).result).toEqual(finished);
      expect(reply).toBe(`Done: ${JSON.stringify(finished)}`);
    });
  });

  it('takes its goals from a variable that holds several lines', async () => {
    const goals = recordingGoals();
    const nodes = planGraph("todo = 'Read notes.md\\nSummarize it to summary.md'", '$todo');
    await withInterpreter(nodes, { goals: goals.namespace }, async (agent) => {
      await agent.reply(undefined);
      expect(goals.requests).toEqual([
        { goals: ['Read notes.md', 'Summarize it to summary.md'], node: 'plan' },
      ]);
    });
  });

  it('gives the graph a copy of what the host returned', async () => {
    const kept = { complete: false, reason: 'refused', detail: 'no', steps: 1 };
    const goals = recordingGoals(() => kept);
    await withInterpreter(planGraph("x = 'a'", 'Do $x'), { goals: goals.namespace }, async (agent) => {
      const { state } = await agent.reply(undefined);
      kept.detail = 'changed afterwards';
      expect(variablesInScope(state).result).toEqual({
        complete: false,
        reason: 'refused',
        detail: 'no',
        steps: 1,
      });
    });
  });

  it('fails with a clear NodeError when nothing lends the goal loop', async () => {
    const error = await withInterpreter(planGraph("x = 'a'", 'Do $x'), {}, (agent) =>
      agent.reply(undefined).catch((e: unknown) => e),
    );
    expect(error).toBeInstanceOf(NodeError);
    expect((error as NodeError).node).toBe('plan');
    expect((error as NodeError).message).toBe(
      'node "plan": a goal_loop node needs the goal loop, and nothing lends it to this run',
    );
    expect((error as NodeError).hint).toBe(
      'run the graph with meta-agent chat, call or simulate, which lend it as goals.run',
    );
  });

  it('refuses goals that come out blank, and more than five', async () => {
    const goals = recordingGoals();
    const blank = await withInterpreter(planGraph("x = '  '", '$x'), { goals: goals.namespace }, (agent) =>
      agent.reply(undefined).catch((e: unknown) => e),
    );
    expect(blank).toBeInstanceOf(NodeError);
    expect((blank as Error).message).toBe(
      'node "plan": a goal_loop node has no goals: its instruction came out blank',
    );
    const six = "x = ['a', 'b', 'c', 'd', 'e', 'f'].join('\\n')";
    const many = await withInterpreter(planGraph(six, '$x'), { goals: goals.namespace }, (agent) =>
      agent.reply(undefined).catch((e: unknown) => e),
    );
    expect(many).toBeInstanceOf(NodeError);
    expect((many as Error).message).toBe(
      'node "plan": a goal_loop node has 6 goals (one per line); a goal-loop run takes at most 5',
    );
    expect(goals.requests).toEqual([]);
  });

  it('reports a failure of the goal loop as a NodeError of the node', async () => {
    const goals = recordingGoals(() => {
      throw new UserError('cannot open the workspace', 2);
    });
    const error = await withInterpreter(planGraph("x = 'a'", 'Do $x'), { goals: goals.namespace }, (agent) =>
      agent.reply(undefined).catch((e: unknown) => e),
    );
    expect(error).toBeInstanceOf(NodeError);
    expect((error as NodeError).message).toBe('node "plan": cannot open the workspace');
    expect((error as NodeError).exitCode).toBe(2);
  });

  it('lends the same goals.run to code nodes', async () => {
    const goals = recordingGoals();
    const nodes: NodeSpecInput[] = [
      {
        name: 'start1',
        action: 'code',
        instruction:
          "outcome = goals.run({ goals: ['Write hello.txt'], maxSteps: 3 }); done = outcome.complete",
        transitions: ['say'],
      },
      { name: 'say', action: 'chat_exact', instruction: '$done: $outcome', transitions: ['quit'] },
    ];
    await withInterpreter(nodes, { goals: goals.namespace }, async (agent) => {
      const { reply, state } = await agent.reply(undefined);
      expect(goals.requests).toEqual([{ goals: ['Write hello.txt'], maxSteps: 3 }]);
      expect(variablesInScope(state)).toMatchObject({ outcome: finished, done: true });
      expect(reply).toBe(`true: ${JSON.stringify(finished)}`);
    });
  });
});

describe('goal_loop nodes in the linter', () => {
  const errorsOf = (instruction: string) =>
    lintGraph(
      fileOf([
        { name: 'plan', action: 'goal_loop', instruction, transitions: ['say'] },
        { name: 'say', action: 'chat_exact', instruction: 'Done.', transitions: ['quit'] },
      ]),
    )
      .filter((finding) => finding.severity === 'error')
      .map((finding) => finding.message);

  it('refuses a goal_loop node without goals', () => {
    expect(errorsOf('')).toEqual([
      "a goal_loop node needs goals: write one per line of its instruction (with $vars to use the graph's variables)",
    ]);
    expect(errorsOf('result = \n  \n')).toHaveLength(1);
  });

  it('refuses more than five goals written out, but leaves lines with variables to the run', () => {
    const six = 'a\nb\nc\nd\ne\nf';
    expect(errorsOf(six)).toEqual([
      'a goal_loop node has 6 goals; a goal-loop run takes at most 5 (one per line)',
    ]);
    expect(errorsOf('a\nb\nc\nd\ne\n$more')).toEqual([]);
    expect(errorsOf('result = Write a haiku about $topic\nShut down')).toEqual([]);
  });
});

describe('goal_loop nodes in files and drawings', () => {
  const sheet = `Name,Action,Instruction,Transitions
start1,code,topic = 'tides',plan
plan,goal_loop,"result = Write a page about $topic
Shut down",say
say,chat_exact,Done.,quit
`;

  it("loads from a spreadsheet (an action of ours, not AutoGRAMS') and runs", async () => {
    const graph = csvGraph(sheet);
    expect(lintGraph(graph.file).filter((finding) => finding.severity === 'error')).toEqual([]);
    const goals = recordingGoals();
    const agent = await Interpreter.create({ graph, models: noModels, host: { goals: goals.namespace } });
    try {
      await agent.reply(undefined);
    } finally {
      agent.dispose();
    }
    expect(goals.requests).toEqual([{ goals: ['Write a page about tides', 'Shut down'], node: 'plan' }]);
    // And it is written back as it was read.
    expect(csvGraph(graphToCsv(graph.file).text).file.nodes).toEqual(graph.file.nodes);
  });

  it('has its own colour in DOT and Mermaid drawings', () => {
    const { file } = csvGraph(sheet);
    expect(toDot(file)).toMatch(/"plan" \[[^\n]*goal_loop[^\n]*fillcolor="#ffe8d6"/);
    expect(toMermaid(file)).toContain('classDef goal fill:#ffe8d6,stroke:#52606d');
  });
});
