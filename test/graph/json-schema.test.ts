import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { graphJsonSchema, graphSchemaPath } from '../../src/graph/json-schema.js';

describe('published JSON Schema', () => {
  it('matches the zod schema it is generated from', () => {
    const committed: unknown = JSON.parse(readFileSync(graphSchemaPath(), 'utf8'));
    expect(
      isDeepStrictEqual(committed, graphJsonSchema()),
      'schema/autogram.schema.json is out of date; regenerate it with:\n' +
        '  npx tsc -p . && node dist/src/graph/write-json-schema.js && npx prettier --write schema/',
    ).toBe(true);
  });

  it('describes nodes with their actions, and lets defaulted fields be left out', () => {
    const schema = graphJsonSchema() as {
      required: string[];
      properties: { nodes: { items: { required: string[]; properties: { action: { enum: string[] } } } } };
    };
    expect(schema.required).toEqual(['nodes']);
    expect(schema.properties.nodes.items.required).toEqual(['name', 'action']);
    expect(schema.properties.nodes.items.properties.action.enum).toContain('chat_exact');
  });
});
