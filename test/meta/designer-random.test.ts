/**
 * Designs from a server that answers at random, though always in the form asked for: whatever shape
 * the drawing takes (a goodbye or none, loops with no way out, turns left open), the graph the designer
 * saves lets the conversation end and lints clean.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lintGraph } from '../../src/aipl/lint.js';
import { loadGraphFile } from '../../src/graph/load.js';
import { designWith } from '../fixtures/design/design-run.js';
import { pathToQuit } from '../fixtures/design/ending.js';
import { randomDesigner } from '../fixtures/design/random-replies.js';

const SEEDS = Array.from({ length: 16 }, (_, i) => i + 1);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'designer-random-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('designs from random answers', () => {
  it.each(SEEDS)(
    'seed %i: the saved graph has a path from start to quit and no lint findings',
    async (seed) => {
      const outcome = await designWith(randomDesigner(seed), dir, {
        // Some seeds ask for several nodes to a call, and some check the design in simulated conversations.
        limits: { concurrency: seed % 2 === 0 ? 3 : 40 },
        ...(seed % 4 === 0 ? { check: 2 } : {}),
      });
      expect(outcome).toMatchObject({ ok: true });
      if (!outcome.ok) return;
      const { file } = await loadGraphFile(outcome.saved.graph);
      expect(pathToQuit(file)).toBeDefined();
      expect(lintGraph(file)).toEqual([]);
    },
  );
});
