/**
 * Regenerates `schema/autogram.schema.json` from the zod schema. Run after changing src/graph/schema.ts:
 *   npx tsc -p . && node dist/src/graph/write-json-schema.js && npx prettier --write schema/
 */
import { writeFile } from 'node:fs/promises';
import { graphJsonSchemaText, graphSchemaPath } from './json-schema.js';

await writeFile(graphSchemaPath(), graphJsonSchemaText());
process.stdout.write(`wrote ${graphSchemaPath()}\n`);
