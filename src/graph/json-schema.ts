/**
 * The JSON Schema of native graph files, generated from the zod schema so the two cannot disagree.
 * The published copy lives at `schema/autogram.schema.json` in the package; files we write point to it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
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

/** The folder of this package (found from this module, in src/ or dist/). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'meta-agent-autograms'
    )
      return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('meta-agent: package.json not found above the graph module');
    dir = parent;
  }
}
