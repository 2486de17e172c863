/** Installing the embedded model's runtime: which builds, and what a user sees when npm cannot fetch it. */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import {
  RUNTIME_VERSION,
  installRuntime,
  platformBuilds,
  requestedGpuBuild,
  runtimeDir,
} from '../../src/llm/local/runtime.js';
import { closedUrl } from '../support/openai-server.js';

describe('the embedded model runtime', () => {
  it('installs only this platform’s CPU build unless a GPU build is asked for', () => {
    const cpu = platformBuilds(undefined);
    expect(cpu).toHaveLength(1);
    expect(cpu[0]).toMatch(new RegExp(`^@node-llama-cpp/[a-z0-9-]+@${RUNTIME_VERSION}$`));
    expect(cpu[0]).not.toMatch(/cuda|vulkan/);
    if (process.platform === 'linux' && process.arch === 'x64') {
      expect(platformBuilds('cuda')).toEqual([
        `@node-llama-cpp/linux-x64@${RUNTIME_VERSION}`,
        `@node-llama-cpp/linux-x64-cuda@${RUNTIME_VERSION}`,
        `@node-llama-cpp/linux-x64-cuda-ext@${RUNTIME_VERSION}`,
      ]);
    }
  });

  it('reads META_AGENT_LOCAL_GPU, refusing a value it does not know', () => {
    expect(requestedGpuBuild({})).toBeUndefined();
    expect(requestedGpuBuild({ META_AGENT_LOCAL_GPU: 'off' })).toBeUndefined();
    expect(requestedGpuBuild({ META_AGENT_LOCAL_GPU: 'Vulkan' })).toBe('vulkan');
    expect(() => requestedGpuBuild({ META_AGENT_LOCAL_GPU: 'rocm' })).toThrow(UserError);
  });

  it('fails in one line (exit 2) when the npm registry cannot be reached, leaving nothing half-installed', async () => {
    const root = mkdtempSync(join(tmpdir(), 'meta-agent-runtime-'));
    const env = {
      ...process.env,
      META_AGENT_RUNTIME_DIR: root,
      npm_config_registry: await closedUrl(),
      npm_config_fetch_retries: '0',
      npm_config_cache: join(root, '.npm-cache'),
      npm_config_offline: 'false',
    };
    const failure = installRuntime(env);
    await expect(failure).rejects.toBeInstanceOf(UserError);
    const error = (await failure.catch((caught: unknown) => caught)) as UserError;
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(
      /^could not install the embedded model's runtime \(node-llama-cpp [\d.]+\) from the npm registry: /,
    );
    expect(error.message).not.toContain('\n');
    expect(error.hint).toContain('--base-url');
    expect(existsSync(runtimeDir(env))).toBe(false);
    expect(readdirSync(root).filter((name) => name !== '.npm-cache')).toEqual([]);
  }, 60_000);
});
