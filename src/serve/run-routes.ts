/**
 * The goal-run routes: start a run (POST /v1/runs), list a key's runs, see where one stands, follow its
 * events as SSE (the events `meta-agent run --json` prints; the stream ends after the run does), and
 * answer the command it waits on (`y`, `y -N`, `n`, or feedback), as a user at `meta-agent run`'s
 * prompt would. What a run may do is the server's to say (goal-runs.ts); a request only asks.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { MAX_GOALS } from '../graph/parse.js';
import type { ServeContext } from './context.js';
import type { ServeEnv } from './env.js';
import { ApiError } from './errors.js';
import { GoalRuns, type LiveRun } from './goal-runs.js';
import { readBody } from './request.js';
import { streamLog } from './sse.js';

const newRun = z.strictObject({
  name: z.string().trim().min(1).max(100).optional(),
  role: z.string().trim().min(1).max(2000).optional(),
  goals: z.array(z.string().trim().min(1).max(2000)).min(1).max(MAX_GOALS),
  maxSteps: z.number().int().positive().optional(),
  maxTokens: z.number().int().positive().optional(),
  maxCostUsd: z.number().positive().optional(),
  maxTimeSeconds: z.number().positive().optional(),
});

const answer = z.strictObject({ answer: z.string().trim().min(1) });

export function runRoutes(ctx: ServeContext): Hono<ServeEnv> {
  const app = new Hono<ServeEnv>();
  const runs = new GoalRuns(ctx);
  const owned = (owner: string, id: string): LiveRun => {
    const run = runs.find(owner, id);
    if (!run) throw new ApiError(404, `you have no run ${id}`, 'run_not_found');
    return run;
  };

  app.get('/', (c) => c.json({ data: runs.list(c.get('owner')).map((run) => run.view()) }));

  app.post('/', async (c) => {
    const run = await runs.start(c.get('owner'), await readBody(c, newRun));
    return c.json(run.view(), 201);
  });

  app.get('/:id', (c) => c.json(owned(c.get('owner'), c.req.param('id')).view()));

  app.get('/:id/events', (c) => {
    const run = owned(c.get('owner'), c.req.param('id'));
    return streamLog(c, run.log, { closing: Promise.race([ctx.closing, run.done]), ended: run.finished });
  });

  app.post('/:id/answer', async (c) => {
    const run = owned(c.get('owner'), c.req.param('id'));
    await run.answer((await readBody(c, answer)).answer);
    return c.json(run.view());
  });

  return app;
}
