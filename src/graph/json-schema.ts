/**
 * The JSON Schema of native graph files, generated from the zod schema so the two cannot disagree.
 * The published copy lives at `schema/autogram.schema.json` in the package; files we write point to it.
 */
import { dirname, join, relative, sep } from 'node:path';
import { z } from 'zod';
import { packageRoot } from '../package-root.js';
import { graphFileSchema } from './schema.js';

/** The JSON Schema (draft 2020-12) of a graph file as a user writes it: fields with defaults are optional. */
export function graphJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(graphFileSchema, { io: 'input' }),
    title: 'meta-agent autogram',
    description: 'An agent graph (autogram) for meta-agent: nodes, their transitions and run settings.',
  };
}

/** The text of `schema/autogram.schema.json` as it should be committed. */
export function graphJsonSchemaText(): string {
  return `${JSON.stringify(graphJsonSchema(), null, 2)}\n`;
}

/** Where the published schema lives in this package (found from this module, in src/ or dist/). */
export function graphSchemaPath(): string {
  return join(packageRoot(), 'schema', 'autogram.schema.json');
}

/** The `$schema` reference for a graph file saved at `filePath`: the package's schema, relative to it. */
export function schemaRefFor(filePath: string): string {
  return relative(dirname(filePath), graphSchemaPath()).split(sep).join('/');
}
