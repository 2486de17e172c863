/**
 * A store that keeps everything in the process: for agents whose conversations need not outlive it
 * (a library user's tests, a short-lived service), and the second implementation that keeps the store
 * interface honest. It holds each write as JSON text, so no caller shares an object with it, and it
 * makes the keys unique as a database would: a turn, a step's result or a node's committed result,
 * once recorded, is never replaced by a different one (DuplicateWrite).
 */
import { loadedRunState } from '../autonomous/run-state.js';
import { parseState, type ConversationState } from '../engine/state.js';
import { UserError } from '../errors.js';
import { parseFlowRun, type FlowRunState } from '../flow/run-state.js';
import { catalogInMemory } from './catalog.js';
import { digestOf } from './digest.js';
import type { Store } from './store.js';

/** A write under a key the store holds with another value: the caller did a thing twice. */
export class DuplicateWrite extends Error {}

/** One write the store took: which part, under which key, and its unique part (turn, step, node). */
export interface StoreWrite {
  part: 'conversation' | 'goal-run' | 'flow-run';
  key: string;
  /** The unique keys this write recorded for the first time, e.g. `turn 3`, `step 2`, `pass 1 plan`. */
  recorded: string[];
}

export interface InMemoryStore extends Store {
  /** Every write, in order. */
  readonly writes: readonly StoreWrite[];
}

export function inMemoryStore(): InMemoryStore {
  const writes: StoreWrite[] = [];
  const latest = new Map<string, string>();
  /** Unique keys, each with a digest of the JSON it was first recorded with (a turn's is a whole state). */
  const unique = new Map<string, string>();

  const record = (part: StoreWrite['part'], key: string, value: unknown, keyed: Array<[string, unknown]>) => {
    const recorded: string[] = [];
    for (const [name, item] of keyed) {
      const id = `${part} ${key} ${name}`;
      const digest = digestOf(item);
      const held = unique.get(id);
      if (held === undefined) {
        unique.set(id, digest);
        recorded.push(name);
      } else if (held !== digest)
        throw new DuplicateWrite(`${part} ${key}: ${name} is recorded already, differently`);
    }
    latest.set(`${part} ${key}`, JSON.stringify(value));
    writes.push({ part, key, recorded });
  };
  const read = (part: StoreWrite['part'], key: string): unknown => {
    const text = latest.get(`${part} ${key}`);
    return text === undefined ? undefined : JSON.parse(text);
  };

  let runs = 0;
  return {
    writes,
    conversations: {
      load: async (key) => {
        const json = read('conversation', key);
        return json === undefined ? undefined : parseState(json, key);
      },
      save: async (key, state: ConversationState) =>
        record('conversation', key, state, [[`turn ${state.steps}`, state]]),
    },
    goalRuns: {
      create: async (state, names) => `${[...names, state.id].join('-')}#${++runs}`,
      load: async (key) => {
        const json = read('goal-run', key);
        if (json === undefined) throw new UserError(`there is no goal run ${key} in this store`, 2);
        return loadedRunState(json, key);
      },
      save: async (key, state) =>
        record(
          'goal-run',
          key,
          state,
          state.history.flatMap((entry) => (entry.kind === 'command' ? [[`step ${entry.step}`, entry]] : [])),
        ),
    },
    flowRuns: {
      load: async (key, flow) => {
        const json = read('flow-run', key);
        return json === undefined ? undefined : parseFlowRun(json, flow, key);
      },
      save: async (key, state: FlowRunState) =>
        record(
          'flow-run',
          key,
          state,
          Object.entries(state.current?.results ?? {}).map(([node, result]) => [
            `pass ${state.current!.pass} ${node}`,
            result,
          ]),
        ),
    },
    catalog: catalogInMemory(),
  };
}
