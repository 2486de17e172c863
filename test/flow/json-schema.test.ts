import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { flowJsonSchema, flowSchemaPath } from '../../src/flow/json-schema.js';

describe('published flow JSON Schema', () => {
  it('matches the zod schema it is generated from', () => {
    const committed: unknown = JSON.parse(readFileSync(flowSchemaPath(), 'utf8'));
    expect(
      isDeepStrictEqual(committed, flowJsonSchema()),
      'schema/flow.schema.json is out of date; regenerate it with:\n' +
        '  npx tsc -p . && node dist/src/flow/write-json-schema.js && npx prettier --write schema/',
    ).toBe(true);
  });

  it('says a node has a prompt or a tool, exactly one', () => {
    const schema = flowJsonSchema() as {
      properties: { nodes: { items: { required: string[]; oneOf: unknown[] } } };
    };
    expect(schema.properties.nodes.items.required).toEqual(['name']);
    expect(schema.properties.nodes.items.oneOf).toEqual([{ required: ['prompt'] }, { required: ['tool'] }]);
  });
});
