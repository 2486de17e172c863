import { describe, expect, it, vi } from 'vitest';
import { UserError } from '../../src/errors.js';
import { renderSvg } from '../../src/export/svg.js';

/** What the next render throws: WASM Graphviz stops with an ExitStatus, not an Error, when out of memory. */
let thrown: unknown;
vi.mock('../../src/export/graphviz.js', () => ({
  graphviz: () =>
    Promise.resolve({
      render: () => {
        throw thrown;
      },
    }),
}));

describe('Graphviz stopping while it draws', () => {
  it('is a UserError naming the formats that still work, when it runs out of memory', async () => {
    thrown = { name: 'ExitStatus', message: 'Program terminated with exit(1)', status: 1 };
    const result = renderSvg('digraph { a -> b }');
    await expect(result).rejects.toBeInstanceOf(UserError);
    await expect(result).rejects.toMatchObject({
      message:
        'Graphviz stopped while drawing the graph (Program terminated with exit(1)); the graph is too large for it',
      hint: 'export it as DOT, JSON, CSV or Mermaid instead (--format dot|json|csv|mermaid)',
      exitCode: 1,
    });
  });

  it('is a UserError when it runs out of stack', async () => {
    thrown = new RangeError('Maximum call stack size exceeded');
    await expect(renderSvg('digraph { a -> b }')).rejects.toThrow(
      'Graphviz stopped while drawing the graph (Maximum call stack size exceeded); the graph is too large for it',
    );
  });
});
