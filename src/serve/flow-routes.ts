/**
 * The flow routes: run one pass of a served flow and answer its report (POST waits for the pass, up to
 * the server's deadline; past it the answer is 504 and the pass goes on), fetch a pass's report (or
 * where it stands while it runs), and follow its `flow.*` events as SSE.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import type { ServeContext } from './context.js';
import { withinDeadline } from './deadline.js';
import type { ServeEnv } from './env.js';
import { ApiError } from './errors.js';
import type { FlowPasses, LivePass } from './flow-passes.js';
import { readBody } from './request.js';
import type { ServedFlow } from './served.js';
import { streamLog } from './sse.js';

const newPass = z.strictObject({ inputs: z.record(z.string(), z.string()).optional() });

export function flowRoutes(ctx: ServeContext, passes: FlowPasses): Hono<ServeEnv> {
  const app = new Hono<ServeEnv>();
  const owned = (owner: string, flow: string, id: string): LivePass => {
    const pass = passes.find(owner, servedFlow(ctx, flow).name, id);
    if (!pass) throw new ApiError(404, `you have no pass ${id} of the flow "${flow}"`, 'pass_not_found');
    return pass;
  };

  app.post('/:name/passes', async (c) => {
    const flow = servedFlow(ctx, c.req.param('name'));
    const { inputs = {} } = await readBody(c, newPass);
    const pass = await passes.start(c.get('owner'), flow, inputs);
    const where = `/v1/flows/${encodeURIComponent(flow.name)}/passes/${pass.id}`;
    await withinDeadline(ctx, pass.done, 'the pass', where);
    const view = pass.view();
    if (view.status === 'failed') throw new ApiError(500, view.error!, 'flow_failed');
    return c.json(view, 201);
  });

  app.get('/:name/passes/:id', (c) =>
    c.json(owned(c.get('owner'), c.req.param('name'), c.req.param('id')).view()),
  );

  app.get('/:name/passes/:id/events', (c) => {
    const pass = owned(c.get('owner'), c.req.param('name'), c.req.param('id'));
    return streamLog(c, pass.log, { closing: Promise.race([ctx.closing, pass.done]), ended: pass.finished });
  });

  return app;
}

/** The served flow `name`: 404 when nothing of that name is served, 400 when it is an agent. */
function servedFlow(ctx: ServeContext, name: string): ServedFlow {
  const served = ctx.served.get(name);
  if (!served) throw new ApiError(404, `no flow "${name}" is served here`, 'flow_not_found');
  if (served.kind !== 'flow')
    throw new ApiError(
      400,
      `"${name}" is an agent, not a flow: talk to it at /v1/chat/completions or /v1/conversations`,
      'not_a_flow',
    );
  return served;
}
