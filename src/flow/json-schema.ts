/**
 * The JSON Schema of flow files, generated from the zod schema so the two cannot disagree. The
 * published copy lives at `schema/flow.schema.json`.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { packageRoot } from '../package-root.js';
import { flowFileSchema, flowNodeSchema } from './schema.js';

/** The JSON Schema (draft 2020-12) of a flow file as a user writes it: fields with defaults are optional. */
export function flowJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(flowFileSchema, {
      io: 'input',
      // The node's refinement, which JSON Schema cannot read from zod: a prompt or a tool, not both.
      override: ({ zodSchema, jsonSchema }) => {
        if (zodSchema === flowNodeSchema)
          jsonSchema.oneOf = [{ required: ['prompt'] }, { required: ['tool'] }];
      },
    }),
    title: 'meta-agent flow',
    description:
      'An AgentKit flow for meta-agent: prompt nodes (or MCP tool calls) with dependencies, evaluated in dependency order, several at once.',
  };
}

/** The text of `schema/flow.schema.json` as it should be committed. */
export function flowJsonSchemaText(): string {
  return `${JSON.stringify(flowJsonSchema(), null, 2)}\n`;
}

/** Where the published schema lives in this package. */
export function flowSchemaPath(): string {
  return join(packageRoot(), 'schema', 'flow.schema.json');
}
