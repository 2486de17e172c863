/**
 * The embedded model's runtime for tests: installed once, by meta-agent's own installer, into
 * node_modules/.cache (so a clean clone fetches it from the npm registry on its first test run), and
 * shared by every test through META_AGENT_RUNTIME_DIR while each keeps its own model cache.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installRuntime } from '../../src/llm/local/runtime.js';
import { writeTinyGguf } from './tiny-gguf.js';

export const TEST_RUNTIME_DIR = fileURLToPath(
  new URL('../../node_modules/.cache/meta-agent-runtime', import.meta.url),
);

/**
 * The environment of a test that runs the embedded model: the shared runtime, an empty cache, one
 * thread (the tiny model is fastest on one, and the machine's other core runs other tests), and a
 * hub that cannot be reached, so nothing is ever downloaded from the internet.
 */
export function localTestEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    META_AGENT_RUNTIME_DIR: TEST_RUNTIME_DIR,
    META_AGENT_CACHE_DIR: mkdtempSync(join(tmpdir(), 'meta-agent-cache-')),
    META_AGENT_LOCAL_THREADS: '1',
    HF_ENDPOINT: 'http://127.0.0.1:9',
    ...extra,
  };
}

/** Installs the runtime when it is missing (about 5 s from the npm registry). */
export async function ensureTestRuntime(): Promise<void> {
  await installRuntime({ ...process.env, META_AGENT_RUNTIME_DIR: TEST_RUNTIME_DIR });
}

/** Writes the tiny random-weights model (see tiny-gguf.ts) into a fresh folder and returns its path. */
export function tinyModelFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'tiny-gguf-')), 'tiny.gguf');
  writeTinyGguf(path);
  return path;
}
