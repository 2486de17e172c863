/** Shared fixtures for the TUI tests: graphs, edits as the interpreter reports them, frame helpers. */
import { EventEmitter } from 'node:events';
import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import type { ReactElement } from 'react';
import { EventBus, type AgentEvent } from '../../src/events.js';
import type { GraphEdit } from '../../src/graph/edit.js';
import { VersionedGraph } from '../../src/graph/versioned.js';
import type { StaticGraph } from '../../src/graph/view.js';
import { App } from '../../src/tui/App.js';
import type { ChatLayoutProps } from '../../src/tui/layouts/ChatLayout.js';
import { monoTheme } from '../../src/tui/theme.js';
import { graphOf } from '../support/agents.js';

/** A small support agent: a choice, a thought, a function call and an interjection. */
export function supportGraph(): StaticGraph {
  return graphOf(
    [
      {
        name: 'start1',
        action: 'chat',
        instruction: 'Greet the user and ask what they need.',
        transitions: ['billing', 'tech'],
        transitionQuestion: 'What does the user need help with?',
        transitionChoices: ['a question about a bill', 'a technical problem'],
      },
      {
        name: 'billing',
        action: 'thought',
        instruction: 'plan = Plan the answer.',
        transitions: ['answer'],
      },
      { name: 'tech', action: 'function', instruction: 'fix = diagnose(issue)', transitions: ['answer'] },
      {
        name: 'diagnose(issue)',
        action: 'local_function',
        instruction: 'Find the cause of $issue.',
        transitions: ['return'],
      },
      { name: 'answer', action: 'chat', instruction: 'Answer using $plan.', transitions: ['start1'] },
      {
        name: 'angry',
        action: 'chat',
        instruction: 'Calm the user.',
        conditionInterjection: 'The user is angry.',
        transitions: ['start1'],
      },
    ],
    { agentName: 'Ava', userName: 'Sam' },
    'support',
  );
}

/** A chain of `count` nodes, `n0 -> n1 -> …`, each with a two-way choice to keep edges realistic. */
export function chainGraph(count: number): StaticGraph {
  const nodes = Array.from({ length: count }, (_, i) => ({
    name: `n${i}`,
    action: 'chat' as const,
    instruction: `Step ${i}.`,
    transitions: [`n${(i + 1) % count}`, `n${(i + 2) % count}`],
    transitionQuestion: 'Which way?',
    transitionChoices: ['next', 'skip'],
  }));
  return graphOf(nodes, {}, `chain${count}`);
}

/** A versioned copy of the support graph, for self-editing runs. */
export function versionedSupportGraph(): VersionedGraph {
  return new VersionedGraph(supportGraph().file);
}

/** Applies an edit and returns the event the interpreter emits for it. */
export function applyEdit(graph: VersionedGraph, edit: GraphEdit, by = 'self'): AgentEvent {
  const record = graph.apply(edit, { by });
  if (!record) throw new Error(`edit changed nothing: ${JSON.stringify(edit)}`);
  return {
    type: 'graph.edited',
    version: record.version,
    by,
    op: record.op,
    nodes: [record.after?.name ?? record.name],
    totalNodes: graph.nodes().length,
  };
}

/** A mounted view, read as plain-text frames and driven by key presses. */
export interface Mounted {
  /** The last frame without escape codes. */
  frame(): string;
  press(...keys: string[]): Promise<void>;
}

/** Renders a view; ink-testing-library's `cleanup` unmounts it. */
export function mount(tree: ReactElement): Mounted {
  const instance = render(tree);
  return {
    frame: (): string => stripVTControlCharacters(instance.lastFrame() ?? ''),
    /** Sends keys, then lets Ink parse them and React commit. */
    press: async (...keys: string[]): Promise<void> => {
      for (const key of keys) {
        instance.stdin.write(key);
        // Ink holds a lone Escape for 20 ms in case an escape sequence follows.
        if (key === KEY.escape) await new Promise((resolve) => setTimeout(resolve, 30));
        await settle();
      }
    },
  };
}

/** The chat view with its own bus, on a terminal of {@link SIZE} in the mono theme; `props` override. */
export function mountChat(props: Partial<ChatLayoutProps> = {}) {
  const { bus, emit } = eventBus();
  const ui = mount(
    <App
      mode="chat"
      bus={bus}
      graph={supportGraph()}
      onSubmit={() => {}}
      onQuit={() => {}}
      size={SIZE}
      theme={monoTheme}
      {...props}
    />,
  );
  return { ...ui, bus, emit };
}

/** Lets pending input parsing, effects and renders run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A bus and a helper that emits events, then lets the UI catch up. */
export function eventBus(): { bus: EventBus; emit: (...events: AgentEvent[]) => Promise<void> } {
  const bus = new EventBus();
  return {
    bus,
    emit: async (...events) => {
      for (const event of events) bus.emit(event);
      await settle();
    },
  };
}

/** Key sequences as a terminal sends them. */
export const KEY = {
  up: '\u001B[A',
  down: '\u001B[B',
  tab: '\t',
  shiftTab: '\u001B[Z',
  enter: '\r',
  escape: '\u001B',
  backspace: '\u007F',
  pageDown: '\u001B[6~',
  ctrlC: '\u0003',
} as const;

/** The size the tests fix the terminal at, so layouts do not depend on the machine running them;
 * ink-testing-library draws 100 columns wide. */
export const SIZE = { rows: 30, columns: 100 } as const;

/** Model usage for a `model.call` event. */
export function usage(promptTokens: number, completionTokens: number) {
  return { promptTokens, completionTokens };
}

/** Just enough of a TTY for Ink: it writes frames here and reads keys from the input side. */
export class FakeTerminal extends EventEmitter {
  readonly isTTY = true;
  columns = 100;
  rows = 24;
  output = '';
  write = (chunk: string, callback?: () => void): boolean => {
    this.output += chunk;
    callback?.();
    return true;
  };
}

/** The input side of a TTY: `type` delivers its text as one read. */
export class FakeKeyboard extends EventEmitter {
  readonly isTTY = true;
  #pending: string | null = null;
  setRawMode(): this {
    return this;
  }
  setEncoding(): void {}
  ref(): void {}
  unref(): void {}
  resume(): void {}
  pause(): void {}
  read(): string | null {
    const data = this.#pending;
    this.#pending = null;
    return data;
  }
  type(data: string): void {
    this.#pending = data;
    this.emit('readable');
  }
}
