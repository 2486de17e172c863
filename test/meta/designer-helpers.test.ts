import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { designerHelpers, type DesignFinding, type DesignRun } from '../../meta/host.js';
import { DEFAULT_DESIGN_LIMITS } from '../../meta/limits.js';
import { StageTracker } from '../../meta/stages.js';
import { EventBus } from '../../src/events.js';
import { graphConfigSchema, type GraphFile } from '../../src/graph/schema.js';
import { StaticGraph } from '../../src/graph/view.js';
import { OpenAIModel } from '../../src/llm/openai.js';
import { cooperativeDesigner, dotAnswer, lastMessage, promptKind } from '../fixtures/design/replies.js';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';

let server: OpenAIServer;
let dir: string;
let helpers: ReturnType<typeof designerHelpers>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'designer-helpers-'));
  server = await startOpenAIServer({ reply: cooperativeDesigner(4) });
  const designer = new StaticGraph({
    format: 'meta-agent/autogram@1',
    name: 'stub',
    description: '',
    config: graphConfigSchema.parse({}),
    nodes: [
      {
        name: 'only',
        action: 'transition',
        instruction: '',
        transitions: [],
        transitionChoices: [],
        userInstructions: [],
      },
    ],
  });
  const run: DesignRun = {
    identity: { name: 'tutor', description: 'a tutor bot' },
    outDir: dir,
    limits: DEFAULT_DESIGN_LIMITS,
    model: new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini', maxRetries: 0 }),
    stages: new StageTracker(designer, new EventBus()),
    work: {},
  };
  helpers = designerHelpers(run);
});

afterEach(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** Parses a 4-node draft, writes its fields and assembles it, as the designer graph does. */
async function designed(): Promise<{ dot: unknown; graph: GraphFile }> {
  helpers.keepOutline('An outline.');
  const dot = await helpers.parseDot(dotAnswer(4));
  const fields = (await helpers.writeNodeFields(dot)) as { fields: unknown };
  return { dot, graph: helpers.assemble(dot, fields.fields) as GraphFile };
}

describe('the designer’s host helpers', () => {
  it('repairs a node the linter faults by asking the model again, showing it the finding', async () => {
    const { graph } = await designed();
    // Break the branching start node as a hand edit might: its question is gone.
    const broken = {
      ...graph,
      nodes: graph.nodes.map((n) => (n.name === 'start' ? { ...n, transitionQuestion: '' } : n)),
    };
    const findings = helpers.lint(broken) as DesignFinding[];
    expect(findings).toEqual([
      {
        node: 'start',
        text: 'node start: has 2 transitions but no transitionQuestion (add a multiple-choice question whose answers pick the transition)',
      },
    ]);

    const repaired = (await helpers.repair(broken, findings)) as GraphFile;
    expect(helpers.lint(repaired)).toEqual([]);
    expect(repaired.nodes.find((n) => n.name === 'start')!.transitionQuestion).toBe(
      'How did the user reply at start?',
    );
    const asked = server.chatRequests().filter((b) => promptKind(b) === 'repair');
    expect(asked).toHaveLength(1);
    expect(lastMessage(asked[0]!)).toContain('- node start: has 2 transitions but no transitionQuestion');
  });

  it('reports a node with more ways out than a question has letters as a drawing problem', async () => {
    const fan = ['digraph { start [label="Ask"];']
      .concat(
        Array.from(
          { length: 27 },
          (_, i) => `  n${i} [label="Way ${i}"]; start -> n${i} [label="reply ${i}"];`,
        ),
      )
      .concat('}')
      .join('\n');
    const parsed = (await helpers.parseDot(`\`\`\`dot\n${fan}\n\`\`\``)) as { problems: string[] };
    expect(parsed.problems).toEqual([
      'node start has 27 outgoing edges, more than 26: merge similar user replies into one edge',
    ]);
  });

  it('refuses arguments the designer graph should never pass, naming the helper', async () => {
    expect(() => helpers.assemble({ nodes: 'no' }, [])).toThrow(
      /^meta\.assemble\(dot\): unexpected value at nodes/,
    );
    await expect(Promise.resolve().then(() => helpers.parseDot(42))).rejects.toThrow(
      'meta.parseDot(answer): expected text, got number',
    );
  });
});
