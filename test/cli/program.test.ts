import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';

const bin = fileURLToPath(new URL('../../bin/meta-agent.js', import.meta.url));

describe('meta-agent program', () => {
  it('names itself and reports the package version', () => {
    const program = buildProgram();
    expect(program.name()).toBe('meta-agent');
    expect(program.version()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('ends quietly when the reader of its output stops early, as `| head -1` does', async () => {
    const child = spawn(process.execPath, ['--no-node-snapshot', bin, 'show', 'meta/designer.autogram.json']);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Closed before the CLI writes anything, so its first write meets a closed pipe.
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
