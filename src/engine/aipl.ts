/**
 * AIPL in an autogram whose `config.aipl` is set: the frame's prompt and the instructions of prose nodes
 * are templates, rendered before each model call that reads them, after their model-update phase
 * (src/aipl/phase.ts). One per interpreter, so answers cached for a turn serve every render in it.
 *
 * How AIPL and the autogram read each other: templates read the autogram's variables in scope as
 * `{vars.name}` (and `$name` is embedded into the template's text, escaped, before it is parsed); code,
 * conditions and `$var`s read the AIPL state's latest values as `aipl.ns.key` (frames.ts), and code
 * stores one with `aipl.set("ns.key", value)` (AIPL_NAMESPACE).
 */
import type { AgentEvent, EventBus } from '../events.js';
import type { Template } from '../aipl/ast.js';
import { parseTemplate } from '../aipl/parse.js';
import { AiplCache, DEFAULT_AIPL_SETTINGS, renderWithModel } from '../aipl/phase.js';
import { clockSpecials } from '../aipl/render.js';
import { newAiplState, setValue, type AiplEntry } from '../aipl/state.js';
import type { HostFunction } from '../sandbox/index.js';
import type { GraphView } from '../graph/view.js';
import { countTokens } from '../llm/tokens.js';
import type { ModelSet } from '../llm/types.js';
import { variablesInScope } from './frames.js';
import { conversationMessages, historyWindow } from './prompt.js';
import type { ConversationState } from './state.js';

/**
 * The namespace code nodes of an AIPL graph store state through: `aipl.set("ns.key", value)`, read back
 * as `aipl.ns.key` (frames.ts) and by every template rendered after it. It acts on the conversation
 * whose code calls it, as `self` does.
 */
export const AIPL_NAMESPACE = 'aipl';

/**
 * The functions of AIPL_NAMESPACE: `set` stores a value in the state of the conversation `running`
 * gives, as the node running there, and tells it as an update (an `aipl.phase` event that stored it).
 */
export function aiplFunctions(
  running: () => ConversationState | undefined,
  events: EventBus,
): Record<string, HostFunction> {
  return {
    set: (name: unknown, value: unknown) => {
      const state = running();
      if (!state) throw new Error('aipl.set works in a conversation only');
      state.aipl ??= newAiplState();
      const node = state.current ?? '(host)';
      events.emit(setEvent(setValue(state.aipl, name, value, `set by node ${node}`), `node ${node}`));
    },
  };
}

/** A value set from outside a template, told as an update is: `label` set it, asking no model. */
export function setEvent(entry: AiplEntry, label: string): AgentEvent {
  const stored = [{ name: entry.name, value: entry.value }];
  return { type: 'aipl.phase', label, turn: entry.turn, calls: 0, cached: 0, ms: 0, stored };
}

/** Parsed templates kept, by their text: a prompt is rendered every turn, and parsing it once is enough. */
const PARSED_KEPT = 64;

export class AiplTemplates {
  readonly #cache = new AiplCache();
  readonly #parsed = new Map<string, Template>();

  constructor(
    readonly graph: GraphView,
    readonly models: ModelSet,
    readonly events: EventBus,
    readonly clock: () => Date,
  ) {}

  /**
   * Renders `source` for `state`, storing what its updates learn in `state.aipl`. `origin` names the text
   * in a syntax error (`the prompt`, `node "greet" instruction`), `label` in events.
   */
  async render(source: string, state: ConversationState, origin: string, label: string): Promise<string> {
    const config = this.graph.config;
    const settings = { ...DEFAULT_AIPL_SETTINGS, ...config.aipl };
    // A conversation saved before the graph turned AIPL on starts its state now.
    state.aipl ??= newAiplState();
    const window = historyWindow(config, (text) => countTokens(this.models.chatbot.modelName, text));
    const result = await renderWithModel({
      template: this.#parse(source, origin),
      state: state.aipl,
      vars: variablesInScope(state),
      names: { char: config.agentName, user: config.userName, assistant: config.agentName },
      clock: clockSpecials(this.clock()),
      conversation: conversationMessages(state, window),
      models: this.models,
      settings,
      cache: this.#cache,
      events: this.events,
      label,
    });
    // A line left blank at either end by a construct is no part of a prompt.
    return result.text.trim();
  }

  #parse(source: string, origin: string): Template {
    const known = this.#parsed.get(source);
    if (known) return known;
    const template = parseTemplate(source, origin);
    if (this.#parsed.size >= PARSED_KEPT) this.#parsed.delete(this.#parsed.keys().next().value!);
    this.#parsed.set(source, template);
    return template;
  }
}
