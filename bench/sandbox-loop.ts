/**
 * The sandboxed loop pass of issue 35: a graph that loops through a code node and a boolean condition,
 * run by the interpreter, beside raw isolated-vm doing the pass's work in one `evalSync` with the
 * variables copied in. Both sides run in interleaved rounds, at two sizes of scope: the 2 variables the
 * pass uses, and the same 2 among 100 (as in a conversation whose state holds more than the loop reads).
 */
import type ivm from 'isolated-vm';
import { Interpreter } from '../src/engine/index.js';
import { graphFileSchema } from '../src/graph/schema.js';
import { StaticGraph } from '../src/graph/view.js';
import { isolatedVm } from '../src/sandbox/isolated-vm.js';
import { instantModels } from './instant-models.js';
import { quantiles } from './stats.js';

/** How much dearer our pass may be than the raw one. */
export const LOOP_PASS_GOAL_RATIO = 2;

/** Passes in one sample, on both sides. */
const PASSES = 100;

export interface LoopPassRow {
  case: string;
  samples: number;
  /** Median microseconds a pass. */
  oursUs: number;
  rawUs: number;
  /** Ours over raw. */
  ratio: number;
}

/**
 * `loop(n, v0, …)` takes `extra` more arguments that the pass never reads (so they are in scope, as a
 * conversation's variables are, without a code node making them), sets `i`, then `step` (code
 * `i = i + 1`) and `more.*`: `more.a`, whose condition `i < n` goes back to `step`, else `more.b` returns
 * `i`. A pass is one code node, one condition and the transition node after it.
 */
function loopGraph(extra: number): StaticGraph {
  const params = ['n', ...Array.from({ length: extra }, (_, k) => `v${k}`)];
  return new StaticGraph(
    graphFileSchema.parse({
      name: 'loop_pass',
      nodes: [
        { name: `loop(${params.join(', ')})`, action: 'code', instruction: 'i = 0', transitions: ['step'] },
        { name: 'step', action: 'code', instruction: 'i = i + 1', transitions: ['more.*'] },
        { name: 'more.a', action: 'transition', booleanCondition: 'i < n', transitions: ['step'] },
        { name: 'more.b', action: 'transition', transitions: ['return i'] },
      ],
    }),
  );
}

/**
 * The raw side: a context of its own, and a pass as one `evalSync` over a copy of the variables it reads,
 * `i` and `n`: the new `i` while `i < n` holds, else -1.
 */
function rawLoop(): { run: (n: number) => number; dispose: () => void } {
  const ivm = isolatedVm();
  const isolate: ivm.Isolate = new ivm.Isolate({ memoryLimit: 64 });
  const context = isolate.createContextSync();
  const pass = 'scope.i + 1 < scope.n ? scope.i + 1 : -1';
  return {
    run: (n) => {
      let passes = 0;
      for (let i = 0; i !== -1; passes++) {
        context.global.setSync('scope', new ivm.ExternalCopy({ i, n }).copyInto({ release: true }));
        i = context.evalSync(pass, { timeout: 1000 }) as number;
      }
      return passes;
    },
    dispose: () => isolate.dispose(),
  };
}

/** Times both sides in `rounds` interleaved rounds, at both sizes, after a warm-up round. */
export async function measureLoopPass(rounds: number): Promise<LoopPassRow[]> {
  const raw = rawLoop();
  const agents: Interpreter[] = [];
  try {
    const sizes = [
      { label: '2 variables', extra: 0 },
      { label: '100 variables', extra: 98 },
    ];
    const sides = await Promise.all(
      sizes.map(async ({ label, extra }) => {
        const agent = await Interpreter.create({ graph: loopGraph(extra), models: instantModels });
        agents.push(agent);
        const args = [PASSES, ...Array.from({ length: extra }, (_, k) => `text ${k}`)];
        return {
          label,
          ours: async () => {
            const { value } = await agent.applyFn('loop', args);
            if (value !== PASSES) throw new Error(`the loop returned ${String(value)}, not ${PASSES}`);
          },
          // The raw pass copies in only what it reads, whatever else a state holds.
          raw: () => raw.run(PASSES),
          oursUs: [] as number[],
          rawUs: [] as number[],
        };
      }),
    );
    for (let round = -1; round < rounds; round++)
      for (const side of sides) {
        let started = performance.now();
        await side.ours();
        const ours = ((performance.now() - started) * 1000) / PASSES;
        started = performance.now();
        side.raw();
        const raw = ((performance.now() - started) * 1000) / PASSES;
        if (round < 0) continue;
        side.oursUs.push(ours);
        side.rawUs.push(raw);
      }
    return sides.map((side) => {
      const ours = quantiles(side.oursUs).median;
      const rawUs = quantiles(side.rawUs).median;
      return {
        case: `loop pass (code node + condition), ${side.label}`,
        samples: side.oursUs.length,
        oursUs: ours,
        rawUs,
        ratio: ours / rawUs,
      };
    });
  } finally {
    for (const agent of agents) agent.dispose();
    raw.dispose();
  }
}
