/**
 * Renders AIPL templates the way an autogram's turn does (the model-update phase, then the renderer),
 * with scripted models that record what they were asked: what the AIPL tests share.
 */
import { parseTemplate } from '../../src/aipl/parse.js';
import {
  AiplCache,
  DEFAULT_AIPL_SETTINGS,
  renderWithModel,
  type AiplSettings,
} from '../../src/aipl/phase.js';
import type { AiplState } from '../../src/aipl/state.js';
import { EventBus, type AgentEvent } from '../../src/events.js';
import type { ScriptFile } from '../../src/llm/scripted.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { noScript, recordingModels, type RecordedCall } from './agents.js';

export interface RenderOptions {
  /** Latest values to start from, by `ns.key`. */
  values?: Record<string, string>;
  state?: AiplState;
  script?: ScriptFile;
  conversation?: ChatMessage[];
  settings?: Partial<AiplSettings>;
  vars?: Record<string, unknown>;
  cache?: AiplCache;
}

/** The clock of every AIPL test: Tuesday, November 24, 2026, 18:05. */
export const TEST_CLOCK = { date: 'Tuesday, November 24, 2026', time: '18:05' };

/** Renders `source` once; models answer from `script` (none: any call fails with its prompt). */
export async function renderAipl(source: string, options: RenderOptions = {}) {
  const state: AiplState = options.state ?? {
    turn: 1,
    log: Object.entries(options.values ?? {}).map(([name, value]) => ({
      name,
      value,
      turn: 0,
      question: '',
    })),
  };
  const { models, calls } = recordingModels(options.script ?? noScript);
  const events: AgentEvent[] = [];
  const bus = new EventBus();
  bus.on((event) => events.push(event));
  const result = await renderWithModel({
    template: parseTemplate(source),
    state,
    vars: options.vars ?? {},
    names: { char: 'Ava', user: 'Sam', assistant: 'Ava' },
    clock: TEST_CLOCK,
    conversation: options.conversation ?? [],
    models,
    settings: { ...DEFAULT_AIPL_SETTINGS, ...options.settings },
    cache: options.cache ?? new AiplCache(),
    events: bus,
    label: 'test',
  });
  return { ...result, state, calls, events };
}

/** What each recorded call asked, as its last message's text. */
export function asked(calls: readonly RecordedCall[]): string[] {
  return calls.map((call) => call.messages.at(-1)?.content ?? '');
}
