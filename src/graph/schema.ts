import { z } from 'zod';

/**
 * Every node action the interpreter runs: AutoGRAMS' actions, with its `python_function` read as `code`,
 * and ours: `goal_loop` (an autonomous goal-loop run whose goals are the instruction's lines) and
 * `flow` (one pass of an AgentKit flow: the instruction's first line is the flow file, the others its
 * inputs as `name = value`).
 */
export const ACTIONS = [
  'chat',
  'chat_exact',
  'chat_suffix',
  'thought',
  'thought_exact',
  'thought_qa',
  'code',
  'function',
  'local_function',
  'global_function',
  'set_prompt',
  'append_prompt',
  'set_user_prompt',
  'append_user_prompt',
  'transition',
  'goal_loop',
  'flow',
] as const;

export const actionSchema = z.enum(ACTIONS);
export type Action = z.infer<typeof actionSchema>;

/** The languages code nodes, boolean conditions and call arguments are written in (src/graph/language.ts). */
export const codeLanguageSchema = z.enum(['javascript', 'python']);

/** Where the weight lists apply: a wildcard group chosen by score, not by conditions (AutoGRAMS' rule). */
const SCORING = 'When `p.*` is chosen by score (its first member has no booleanCondition),';

/** A number of recent exchanges (an agent's output and the input after it) the classifier sees. */
const exchangeCount = z.number().int().nonnegative().optional();

function nodeList(description: string) {
  return z.array(z.string()).optional().describe(description);
}

/** One node as stored in a graph file. Strings keep their AutoGRAMS conventions (`x = …`, `$var`, `f(a)`). */
export const nodeSpecSchema = z.object({
  name: z.string().min(1).describe('Unique name; `f(a,b)` makes the node callable as a function.'),
  action: actionSchema,
  instruction: z.string().default('').describe('What the node does; `x = …` stores its output in x.'),
  transitions: z
    .array(z.string())
    .default([])
    .describe('Next nodes: names, `p.*`, `return [expr]`, `$var`, `quit`.'),
  transitionQuestion: z.string().optional().describe('Multiple-choice question the classifier answers.'),
  transitionChoices: z.array(z.string()).default([]).describe('One answer per transition, in order.'),
  booleanCondition: z
    .string()
    .optional()
    .describe('Expression (in the node’s language) for wildcard (`p.*`) selection.'),
  conditionInterjection: z.string().optional().describe('Makes this an interjection node reached when true.'),
  userInstructions: z.array(z.string()).default([]).describe('What a simulated user says, per transition.'),
  category: z.string().optional(),
  notes: z.string().optional(),
  replyStart: z.string().optional().describe('Overrides the config reply start for this node.'),
  instructionTemplate: z.string().optional().describe('Overrides the config instruction template.'),
  transitionContext: exchangeCount.describe(
    'How many recent exchanges the classifier sees for this node (default: config.transitionContext).',
  ),
  questionPrompt: z
    .string()
    .optional()
    .describe("Opens this node's transition question instead of config.questionPrompt."),
  conversationScope: z
    .string()
    .optional()
    .describe('Chat and thought prompts of this node show only past turns of nodes whose category is this.'),
  exampleInterjection: z
    .string()
    .optional()
    .describe('An example shown to the classifier before the interjection question (interjection nodes).'),
  userInterjection: z
    .string()
    .optional()
    .describe('What a simulated user says to trigger this interjection node.'),
  probabilityInterjection: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe('How often the simulated user triggers this interjection node (default 0.01).'),
  prerequisiteNodes: nodeList(`${SCORING} this member is avoided until one of these has run.`),
  blockingNodes: nodeList(`${SCORING} this member is avoided once one of these has run.`),
  upWeightNodes: nodeList(`${SCORING} each earlier run of these counts for this member.`),
  downWeightNodes: nodeList(`${SCORING} each earlier run of these counts against this member.`),
  requiredRevisit: nodeList(
    'A function node skips its call unless each of these ran since its last visit (or at all, the first time).',
  ),
  transitionProbs: z
    .array(z.number().nonnegative())
    .optional()
    .describe('Weights for sampling transitions in user simulation, one per transition.'),
  language: codeLanguageSchema
    .optional()
    .describe(
      "The language of this node's code, boolean condition and call arguments (default: config.language).",
    ),
});
export type NodeSpec = z.infer<typeof nodeSpecSchema>;
/** A node as a caller may write it: defaults not yet applied. */
export type NodeSpecInput = z.input<typeof nodeSpecSchema>;

/** The classifier's opening line, AutoGRAMS' `default_question_prompt`. */
export const DEFAULT_QUESTION_PROMPT = 'I need you to solve a multiple choice question.';

export const modelRefSchema = z.object({
  model: z.string().optional(),
  baseUrl: z.string().optional(),
});

/** What self-edits may do (config.selfEditLimits) when the graph does not say. */
export const DEFAULT_SELF_EDIT_LIMITS = {
  editsPerTurn: 20,
  maxNodes: 500,
  maxNodeChars: 20_000,
  maxGraphChars: 2_000_000,
} as const;

/** What stops a run that seems endless (config.runLimits) when the graph does not say. */
export const DEFAULT_RUN_LIMITS = { maxSteps: 10_000, maxDepth: 200 } as const;

export const graphConfigSchema = z.object({
  agentName: z.string().default('Agent'),
  userName: z.string().default('User'),
  startNode: z.string().optional().describe('Default: `start1` if present, else the first node.'),
  prompt: z.string().default('').describe('Initial (system) prompt of the chatbot.'),
  userPrompt: z.string().default('').describe('Initial prompt of the simulated user.'),
  instructionTemplate: z.string().default('<last_response>\n\nInstruction for <agent_name>: <instruction>'),
  replyStart: z.string().default("<agent_name>'s reply:"),
  replyStartType: z.enum(['suffix', 'prefix']).default('suffix'),
  language: codeLanguageSchema
    .optional()
    .describe(
      'The language of code nodes, boolean conditions and call arguments, unless a node says otherwise (default: javascript; AutoGRAMS spreadsheets: python). In a Python graph `$var` embeds Python’s str() of the value.',
    ),
  questionPrompt: z
    .string()
    .default(DEFAULT_QUESTION_PROMPT)
    .describe('What the classifier reads first, before the conversation and the question.'),
  transitionContext: exchangeCount.describe(
    'How many recent exchanges the classifier sees (default: all in scope; AutoGRAMS spreadsheets: 1).',
  ),
  historyTokens: z
    .number()
    .int()
    .min(0)
    .default(8000)
    .describe(
      'The most tokens of past turns a prompt carries: older turns are left out, so a long conversation never overflows the model’s context (0: no limit).',
    ),
  classifierHistoryTokens: z
    .number()
    .int()
    .min(0)
    .default(2048)
    .describe(
      'The most tokens of past turns the classifier reads for a one-token answer (AutoGRAMS: classifier_max_input_len 2048), within historyTokens (0: historyTokens alone).',
    ),
  interjectionQuestion: z.string().default('Which of the following is True?'),
  interjectionDefault: z.string().default('None of the above.'),
  interjectionDownWeight: z
    .number()
    .int()
    .min(0)
    .max(100)
    .default(1)
    .describe(
      'How much less likely the classifier picks an interjection than the default answer (logit bias).',
    ),
  endSignal: z
    .string()
    .default('<end>')
    .describe('A user instruction that ends a simulated conversation instead of being said.'),
  generation: z
    .object({
      temperature: z.number().min(0).max(2).optional(),
      maxTokens: z.number().int().positive().optional(),
    })
    .optional()
    .describe('Sampling for chat, thought and simulated-user replies (default: the server’s).'),
  models: z
    .object({
      chatbot: modelRefSchema.optional(),
      classifier: modelRefSchema.optional(),
      userbot: modelRefSchema.optional(),
    })
    .default({}),
  sandbox: z
    .object({
      timeoutMs: z.number().int().positive().default(1000),
      memoryMb: z.number().int().min(8).default(64),
    })
    .default({ timeoutMs: 1000, memoryMb: 64 }),
  runLimits: z
    .object({
      maxSteps: z
        .number()
        .int()
        .positive()
        .default(DEFAULT_RUN_LIMITS.maxSteps)
        .describe(
          'The most nodes one reply or function call may run before it is stopped as an endless loop.',
        ),
      maxDepth: z
        .number()
        .int()
        .positive()
        .default(DEFAULT_RUN_LIMITS.maxDepth)
        .describe('The most function calls nested at once.'),
    })
    .default(() => ({ ...DEFAULT_RUN_LIMITS })),
  memory: z
    .object({
      namespace: z
        .string()
        .regex(
          /^[a-z0-9][a-z0-9._-]{0,63}$/,
          'a namespace is up to 64 lowercase letters, digits, ".", "_" or "-"',
        )
        .optional()
        .describe('Default: the graph’s name.'),
    })
    .optional()
    .describe(
      'Long-term memory, kept in WORKSPACE/.meta-agent/memory/NAMESPACE: code nodes get `memory.add(text, meta?)` and `memory.search(query, k)`, and goal_loop nodes remember and recall in it.',
    ),
  aipl: z
    .object({
      votes: z
        .union([z.literal(1), z.literal(3), z.literal(5)])
        .default(1)
        .describe('Calls per soft function (isEvening(…)); the majority decides.'),
      voteTemperature: z
        .number()
        .min(0)
        .max(2)
        .default(0.7)
        .describe('Sampling temperature of the votes when there are several (one call is asked at 0).'),
      concurrency: z.number().int().min(1).max(64).default(8).describe('Model calls in flight at once.'),
      functions: z
        .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string())
        .default({})
        .describe('Natural-language definitions of soft functions, shown to the model with the call.'),
    })
    .optional()
    .describe(
      'AIPL templates (seed 002): the prompt, set_prompt and append_prompt nodes, and chat and thought instructions are re-rendered every turn from state the model updates. Autogram variables read as {vars.name}; code reads the state as `aipl.ns.key`.',
    ),
  selfReferential: z.boolean().default(false),
  selfEditLimits: z
    .object({
      editsPerTurn: z.number().int().positive().default(DEFAULT_SELF_EDIT_LIMITS.editsPerTurn),
      maxNodes: z.number().int().positive().default(DEFAULT_SELF_EDIT_LIMITS.maxNodes),
      maxNodeChars: z
        .number()
        .int()
        .positive()
        .default(DEFAULT_SELF_EDIT_LIMITS.maxNodeChars)
        .describe('The most characters one node may take as JSON after a self-edit.'),
      maxGraphChars: z
        .number()
        .int()
        .positive()
        .default(DEFAULT_SELF_EDIT_LIMITS.maxGraphChars)
        .describe("The most characters the graph's nodes may take as JSON after a self-edit."),
    })
    .default(() => ({ ...DEFAULT_SELF_EDIT_LIMITS })),
});
export type GraphConfig = z.infer<typeof graphConfigSchema>;

export const GRAPH_FORMAT = 'meta-agent/autogram@1';

/** A native graph file, `NAME.autogram.json`. */
export const graphFileSchema = z.object({
  $schema: z.string().optional(),
  format: z.literal(GRAPH_FORMAT).default(GRAPH_FORMAT),
  name: z.string().default('agent'),
  description: z.string().default(''),
  config: graphConfigSchema.default(graphConfigSchema.parse({})),
  nodes: z.array(nodeSpecSchema).min(1, 'a graph needs at least one node'),
});
export type GraphFile = z.infer<typeof graphFileSchema>;
export type GraphFileInput = z.input<typeof graphFileSchema>;
