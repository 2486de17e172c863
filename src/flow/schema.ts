/**
 * The flow file (`NAME.flow.json`): an AgentKit "thought process" (seed 003) as a DAG of prompt nodes.
 * Each node names the nodes it depends on; its prompt is composed from the database, their outputs and
 * its own question; an optional after-query step checks or reshapes the answer. A node may instead call
 * a tool of one of the user's MCP servers, its arguments composed from the same values. The zod schema
 * is the contract; `schema/flow.schema.json` is generated from it.
 */
import { z } from 'zod';
import { modelRefSchema } from '../graph/schema.js';

export const FLOW_FORMAT = 'meta-agent/flow@1';

/** How many times a node asks the model when its after-query step rejects the answers, unless the flow says. */
export const DEFAULT_ATTEMPTS = 3;

/**
 * How many nodes run at once unless `--concurrency` or the flow says otherwise: enough that every ready
 * node of a step is asked at once in any flow of sensible width, so a pass takes as many round trips as
 * the flow is deep; the cap keeps a very wide step from opening hundreds of connections to one server.
 */
export const DEFAULT_CONCURRENCY = 32;

/** A node name: letters, digits, `_` and `-`, starting with a letter or `_` (it appears in `$out.NAME$`). */
export const FLOW_NODE_NAME = /^[A-Za-z_][\w-]{0,63}$/;

/** Plain JSON, one schema for every such field (the JSON Schema defines it once). */
const jsonValue = z.json();

const nodeName = z
  .string()
  .regex(FLOW_NODE_NAME, 'a node name is letters, digits, "_" or "-" (at most 64), starting with a letter');

const afterQuerySchema = z
  .strictObject({
    schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'A JSON Schema the answer must match: the model is asked for JSON, and the parsed value is the output.',
      ),
    code: z
      .string()
      .optional()
      .describe(
        'JavaScript run in the sandbox with `answer`, `db`, `outputs` and `flow`; its value is the output. Throwing rejects the answer: the message is sent to the model, which tries again.',
      ),
  })
  .refine((step) => step.schema !== undefined || step.code !== undefined, {
    message: 'an afterQuery step needs a schema, code or both',
  });
export type AfterQuery = z.infer<typeof afterQuerySchema>;

/**
 * A tool call in place of a prompt. The server is named, never defined: servers come only from the
 * user's MCP configuration (--mcp-config), as credentials do.
 */
export const toolCallSchema = z.strictObject({
  server: z
    .string()
    .min(1)
    .max(64)
    .describe('An MCP server, by its name in the user’s configuration (--mcp-config).'),
  name: z.string().min(1).max(128).describe('The tool to call.'),
  arguments: z
    .record(z.string(), jsonValue)
    .default({})
    .describe(
      'The tool’s arguments. Every string in them, at any depth, is a template like a prompt (`$db.key$`, `$out.NODE$`); a string that is exactly one reference takes the value as it is (a number, an object), any other string is text.',
    ),
});
export type ToolCall = z.infer<typeof toolCallSchema>;

/**
 * A flow's own model role (`fast`, `reason`, `spatial`: AgentKit's tiers): a lowercase identifier, so
 * `META_AGENT_<ROLE>_MODEL` can name its model as it does a built-in role's.
 */
export const FLOW_ROLE_NAME = /^[a-z][a-z0-9_]{0,31}$/;

/**
 * One entry of a node's `compose` list: a message whose content is a template, the dependencies'
 * questions and answers as earlier turns, or a database list (a history) as messages.
 */
export const composeEntrySchema = z.union([
  z.strictObject({
    role: z.enum(['system', 'user', 'assistant']),
    content: z.string().describe('A template: `$prompt$`, `$out.NODE$`, `$db.key$`.'),
  }),
  z.strictObject({
    dependencies: z
      .union([z.literal('all'), z.array(nodeName)])
      .describe('These dependencies (`all`: every one, in order) as earlier questions and answers.'),
  }),
  z.strictObject({
    history: z
      .string()
      .regex(/^\$db(\.[^$\n]+)?\$$/, 'a history is one database reference, like "$db.history$"')
      .describe(
        'A database list, one message per item: `{role, content}` as it is, anything else as a message of `role`.',
      ),
    last: z.number().int().positive().optional().describe('Only the last N items.'),
    role: z.enum(['user', 'assistant', 'system']).default('user').describe('The role of plain items.'),
  }),
]);
export type ComposeEntry = z.infer<typeof composeEntrySchema>;

export const flowNodeSchema = z
  .strictObject({
    name: nodeName,
    prompt: z
      .string()
      .optional()
      .describe(
        'The question for this subtask; `$db.key$` embeds a database value. A node has a prompt or a tool.',
      ),
    tool: toolCallSchema
      .optional()
      .describe('Call this MCP tool instead of asking the model: its result is the node’s output.'),
    dependencies: z
      .array(nodeName)
      .default([])
      .describe('Nodes whose outputs this one needs: they run first, and their answers are in its prompt.'),
    after: z
      .array(nodeName)
      .default([])
      .describe(
        'Nodes this one runs after without reading their answers (AgentKit’s add_order): it waits until they have settled, answered or not.',
      ),
    model: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe(
        'The model that answers this node: a role of config.models (`fast`, `reason`, …) or a built-in chat role (chatbot, classifier, userbot), else a model name, or `local` for the embedded model. Default: the chatbot.',
      ),
    system: z
      .string()
      .optional()
      .describe('This node’s system message, in place of config.system (a template, like a prompt).'),
    compose: z
      .union([z.string(), z.array(composeEntrySchema).min(1)])
      .optional()
      .describe(
        'The messages after the system message, instead of the default (dependencies as earlier turns, then the prompt). A string is one user message; a list builds several. Templates: `$prompt$`, `$out.NODE$`, `$db.key$`.',
      ),
    afterQuery: afterQuerySchema.optional(),
    fallback: jsonValue
      .optional()
      .describe('The output when every attempt is rejected; without it the node fails.'),
    notes: z.string().optional(),
  })
  .superRefine((node, ctx) => {
    if ((node.prompt === undefined) === (node.tool === undefined))
      ctx.addIssue({
        code: 'custom',
        message: 'a node has either a prompt or a tool (an MCP tool call), exactly one of the two',
      });
    // A tool's result is the output as it is: there is no answer to compose, check or ask again for
    // (a tool may have side effects, so it is called once). A prompt node after it can reshape it.
    if (node.tool)
      for (const field of ['compose', 'afterQuery', 'fallback', 'model', 'system'] as const)
        if (node[field] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: [field],
            message: `a tool node has no ${field}: its output is the tool's result; add a prompt node after it to reshape that`,
          });
  });
export type FlowNode = z.infer<typeof flowNodeSchema>;
export type FlowNodeInput = z.input<typeof flowNodeSchema>;

const inputSchema = z.strictObject({
  description: z.string().optional(),
  default: z.string().optional().describe('Without a default, `--input NAME=…` is required.'),
});

export const flowConfigSchema = z.strictObject({
  system: z.string().optional().describe('The system message of every node’s prompt.'),
  concurrency: z
    .number()
    .int()
    .min(1)
    .max(64)
    .optional()
    .describe('How many nodes run at once (default 32: every ready node of a step, up to 32).'),
  attempts: z
    .number()
    .int()
    .min(1)
    .max(10)
    .default(DEFAULT_ATTEMPTS)
    .describe('How many answers a node asks for before its fallback is used or it fails.'),
  generation: z
    .strictObject({
      temperature: z.number().min(0).max(2).optional(),
      maxTokens: z.number().int().positive().optional(),
    })
    .optional(),
  contextTokens: z
    .number()
    .int()
    .min(512)
    .optional()
    .describe(
      'The model’s context window in tokens (default 8192, as `run`): a node’s prompt is trimmed to fit it with room for the answer.',
    ),
  models: z
    .record(
      z.string().regex(FLOW_ROLE_NAME, 'a model role is a lowercase identifier (letters, digits, "_")'),
      modelRefSchema,
    )
    .default({})
    .refine((models) => !Object.hasOwn(models, 'embedder'), {
      message: 'the embedder is not a chat model: a node cannot be answered by it',
    })
    .describe(
      'The model of each role: `chatbot` answers nodes that name none; other roles (`fast`, `reason`) answer the nodes whose `model` names them.',
    ),
  sandbox: z
    .strictObject({
      timeoutMs: z.number().int().positive().default(1000),
      memoryMb: z.number().int().min(8).default(64),
    })
    .default({ timeoutMs: 1000, memoryMb: 64 }),
});
export type FlowConfig = z.infer<typeof flowConfigSchema>;

/** A flow file as validated. */
export const flowFileSchema = z.strictObject({
  $schema: z.string().optional(),
  format: z.literal(FLOW_FORMAT).default(FLOW_FORMAT),
  name: z.string().default('flow'),
  description: z.string().default(''),
  inputs: z
    .record(z.string().regex(/^[A-Za-z_]\w*$/, 'an input name is a plain identifier'), inputSchema)
    .default({})
    .describe('Values given with `--input NAME=VALUE`, stored in the database under their names.'),
  database: z
    .record(z.string(), jsonValue)
    .default({})
    .describe('The database every node reads (`$db.key$`) and after-query steps write; kept between passes.'),
  config: flowConfigSchema.default(flowConfigSchema.parse({})),
  nodes: z.array(flowNodeSchema).min(1, 'a flow needs at least one node'),
});
export type FlowFile = z.infer<typeof flowFileSchema>;
export type FlowFileInput = z.input<typeof flowFileSchema>;

/** Plain JSON, as the database and node outputs hold it. */
export type Json = z.infer<ReturnType<typeof z.json>>;
