/**
 * The served graphs as the page needs them: a list that says what each is (an agent to chat with or a
 * flow, how large, whether it edits itself), and each one drawn with the export's layout.
 */
import { Hono } from 'hono';
import type { ServeContext } from './context.js';
import type { Drawings } from './drawings.js';
import type { ServeEnv } from './env.js';
import { ApiError } from './errors.js';
import type { Served } from './served.js';

export function graphRoutes(ctx: ServeContext, drawings: Drawings): Hono<ServeEnv> {
  const app = new Hono<ServeEnv>();

  app.get('/', (c) => c.json({ data: [...ctx.served.values()].map(summary) }));

  app.get('/:name/drawing', async (c) => {
    const served = servedNamed(ctx, c.req.param('name'));
    const drawing = await (served.kind === 'agent'
      ? drawings.graph(served.file)
      : drawings.flow(served.flow));
    return c.json({ name: served.name, kind: served.kind, ...drawing });
  });

  return app;
}

function summary(served: Served) {
  const agent = served.kind === 'agent';
  const { description, nodes } = agent ? served.file : served.flow;
  return {
    name: served.name,
    kind: served.kind,
    description,
    nodes: nodes.length,
    selfReferential: agent && served.file.config.selfReferential,
  };
}

function servedNamed(ctx: ServeContext, name: string): Served {
  const served = ctx.served.get(name);
  if (!served)
    throw new ApiError(
      404,
      `no graph "${name}" is served here; GET /v1/graphs lists them`,
      'graph_not_found',
    );
  return served;
}
