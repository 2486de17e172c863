import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';

describe('meta-agent program', () => {
  it('names itself and reports the package version', () => {
    const program = buildProgram();
    expect(program.name()).toBe('meta-agent');
    expect(program.version()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
