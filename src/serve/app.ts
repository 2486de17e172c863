/**
 * The server's routes on Hono: `/healthz` and the page are open to all; everything under `/v1` (and MCP
 * at `/mcp`) asks for a key when the server has keys, refuses bodies over the limit, and answers every
 * error in OpenAI's shape. Each request is logged once, after it is answered.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { conversationGraphRoutes } from './conversation-graph-routes.js';
import { conversationRoutes } from './conversation-routes.js';
import type { ServeContext } from './context.js';
import { Drawings } from './drawings.js';
import type { ServeEnv } from './env.js';
import { ApiError, errorResponse } from './errors.js';
import { FlowPasses } from './flow-passes.js';
import { flowRoutes } from './flow-routes.js';
import { graphRoutes } from './graph-routes.js';
import { ownerOf, type KeyRing } from './keys.js';
import { isLoopback } from './loopback.js';
import { mcpRoute } from './mcp-route.js';
import { openAiRoutes } from './openai-routes.js';
import { PAGE_HEADERS, PAGE_HTML } from './page/document.js';
import { runRoutes } from './run-routes.js';
import { turnFailure } from './turn-failure.js';

/** One answered request, for the log. */
export interface RequestRecord {
  method: string;
  path: string;
  status: number;
  ms: number;
  owner?: string;
  conversation?: string;
}

export interface AppSetup {
  /** Absent: no key is asked for (a server on loopback). */
  keys?: KeyRing;
  /**
   * The server listens on loopback only: a request must name a loopback host, so a web page elsewhere
   * cannot reach it through a name it points at 127.0.0.1 (DNS rebinding).
   */
  loopback: boolean;
  log?: (record: RequestRecord) => void;
}

export function serveApp(ctx: ServeContext, setup: AppSetup): Hono<ServeEnv> {
  const app = new Hono<ServeEnv>();
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    setup.log?.({
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      ...(c.get('owner') !== undefined && { owner: c.get('owner') }),
      ...(c.res.headers.get('X-Conversation-Id') && {
        conversation: c.res.headers.get('X-Conversation-Id')!,
      }),
    });
  });
  if (setup.loopback)
    app.use(async (c, next) => {
      if (!isLoopback((c.req.header('Host') ?? '').replace(/:\d+$/, '')))
        throw new ApiError(
          403,
          'this server answers requests to a loopback address only',
          'host_not_allowed',
        );
      await next();
    });
  app.get('/healthz', (c) => c.json({ ok: true, served: [...ctx.served.keys()] }));
  app.get('/', (c) => c.html(PAGE_HTML, 200, PAGE_HEADERS));
  // /mcp asks for the same keys as /v1, and takes JSON bodies of the same size.
  const keyed: MiddlewareHandler<ServeEnv> = async (c, next) => {
    const owner = setup.keys ? ownerOf(setup.keys, c.req.header('Authorization')) : 'local';
    if (owner === undefined)
      throw new ApiError(
        401,
        c.req.header('Authorization')
          ? 'the API key is not one of this server’s'
          : 'this server asks for an API key: send Authorization: Bearer KEY',
        'invalid_api_key',
      );
    c.set('owner', owner);
    // A form or a script on another site can send text/plain without asking first; JSON it cannot.
    if (c.req.method === 'POST' && !/^application\/json\b/i.test(c.req.header('Content-Type') ?? ''))
      throw new ApiError(
        415,
        'send the body as JSON, with Content-Type: application/json',
        'unsupported_media_type',
      );
    await next();
  };
  const limited = bodyLimit({
    maxSize: ctx.limits.maxBodyBytes,
    onError: () => {
      throw new ApiError(
        413,
        `the request body is larger than ${ctx.limits.maxBodyBytes} bytes`,
        'body_too_large',
      );
    },
  });
  for (const path of ['/v1/*', '/mcp']) app.use(path, keyed, limited);
  app.route('/v1', openAiRoutes(ctx));
  app.route('/v1/conversations', conversationRoutes(ctx));
  app.route('/v1/runs', runRoutes(ctx));
  // One owner's passes are counted together, whether started over /v1/flows or /mcp.
  const passes = new FlowPasses(ctx);
  app.route('/v1/flows', flowRoutes(ctx, passes));
  const drawings = new Drawings();
  app.route('/v1/graphs', graphRoutes(ctx, drawings));
  app.route('/v1/conversations', conversationGraphRoutes(ctx, drawings));
  app.all('/mcp', mcpRoute(ctx, passes));
  app.notFound(() => {
    throw new ApiError(
      404,
      'no such route; the API is under /v1 (GET /v1/models lists the graphs)',
      'not_found',
    );
  });
  app.onError((error, c) => errorResponse(c, error instanceof ApiError ? error : turnFailure(error, ctx)));
  return app;
}
