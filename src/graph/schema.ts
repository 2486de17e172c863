import { z } from 'zod';

/** Every node action the interpreter runs. `python_function` in AutoGRAMS files is read as `code`. */
export const ACTIONS = [
  'chat',
  'chat_exact',
  'thought',
  'thought_exact',
  'code',
  'function',
  'local_function',
  'global_function',
  'set_prompt',
  'append_prompt',
  'set_user_prompt',
  'append_user_prompt',
  'transition',
] as const;

export const actionSchema = z.enum(ACTIONS);
export type Action = z.infer<typeof actionSchema>;

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
  booleanCondition: z.string().optional().describe('JavaScript expression for wildcard (`p.*`) selection.'),
  conditionInterjection: z.string().optional().describe('Makes this an interjection node reached when true.'),
  userInstructions: z.array(z.string()).default([]).describe('What a simulated user says, per transition.'),
  category: z.string().optional(),
  notes: z.string().optional(),
  replyStart: z.string().optional().describe('Overrides the config reply start for this node.'),
  instructionTemplate: z.string().optional().describe('Overrides the config instruction template.'),
  transitionContext: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('How many recent turns the classifier sees for this node (default: all in scope).'),
});
export type NodeSpec = z.infer<typeof nodeSpecSchema>;
/** A node as a caller may write it: defaults not yet applied. */
export type NodeSpecInput = z.input<typeof nodeSpecSchema>;

export const modelRefSchema = z.object({
  model: z.string().optional(),
  baseUrl: z.string().optional(),
});

export const graphConfigSchema = z.object({
  agentName: z.string().default('Agent'),
  userName: z.string().default('User'),
  startNode: z.string().optional().describe('Default: `start1` if present, else the first node.'),
  prompt: z.string().default('').describe('Initial (system) prompt of the chatbot.'),
  userPrompt: z.string().default('').describe('Initial prompt of the simulated user.'),
  instructionTemplate: z.string().default('<last_response>\n\nInstruction for <agent_name>: <instruction>'),
  replyStart: z.string().default("<agent_name>'s reply:"),
  replyStartType: z.enum(['suffix', 'prefix']).default('suffix'),
  interjectionQuestion: z.string().default('Which of the following is True?'),
  interjectionDefault: z.string().default('None of the above.'),
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
  selfReferential: z.boolean().default(false),
  selfEditLimits: z
    .object({
      editsPerTurn: z.number().int().positive().default(20),
      maxNodes: z.number().int().positive().default(500),
    })
    .default({ editsPerTurn: 20, maxNodes: 500 }),
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
