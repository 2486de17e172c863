/**
 * Regenerates `schema/flow.schema.json` from the zod schema. Run after changing src/flow/schema.ts:
 *   npx tsc -p . && node dist/src/flow/write-json-schema.js && npx prettier --write schema/
 */
import { writeFile } from 'node:fs/promises';
import { flowJsonSchemaText, flowSchemaPath } from './json-schema.js';

await writeFile(flowSchemaPath(), flowJsonSchemaText());
process.stdout.write(`wrote ${flowSchemaPath()}\n`);
