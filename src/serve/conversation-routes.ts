/**
 * The native conversation routes, for what the OpenAI shape cannot carry: a client's conversations,
 * where one stands and what was said, its event stream (the events `--json` prints) as SSE, and a
 * conversation started with the agent's opening turn (a graph whose start node speaks first).
 */
import { Hono } from 'hono';
import { z } from 'zod';
import type { ServeContext } from './context.js';
import type { LiveConversation } from './conversations.js';
import type { ServeEnv } from './env.js';
import { ApiError } from './errors.js';
import { messagesOf } from './messages.js';
import { checkedId, readBody } from './request.js';
import { streamLog } from './sse.js';
import { withDeadline } from './turn-failure.js';

const newConversation = z.object({
  graph: z.string().min(1),
  id: z.string().optional(),
});

export function conversationRoutes(ctx: ServeContext): Hono<ServeEnv> {
  const app = new Hono<ServeEnv>();

  app.get('/', async (c) => c.json({ data: await ctx.hub.list(c.get('owner')) }));

  app.post('/', async (c) => {
    const body = await readBody(c, newConversation);
    const served = ctx.served.get(body.graph);
    if (served?.kind !== 'agent')
      throw new ApiError(404, `no agent "${body.graph}" is served here`, 'model_not_found', 'graph');
    const conversation = await ctx.hub.create(
      c.get('owner'),
      body.graph,
      ...(body.id === undefined ? [] : [checkedId(body.id)]),
    );
    c.header('X-Conversation-Id', conversation.id);
    const opening = await withDeadline(
      ctx,
      conversation,
      ctx.track(conversation.turn(undefined, { wait: true })),
    );
    return c.json({ ...view(conversation), reply: opening.reply }, 201);
  });

  app.get('/:id', async (c) => c.json(view(await owned(ctx, c.get('owner'), c.req.param('id')))));

  app.get('/:id/events', async (c) => {
    const conversation = await owned(ctx, c.get('owner'), c.req.param('id'));
    return streamLog(c, conversation.log, { closing: ctx.closing });
  });

  return app;
}

/** `owner`'s conversation `id`; 404 when there is none, or it is another's (which is not said). */
export async function owned(ctx: ServeContext, owner: string, id: string): Promise<LiveConversation> {
  const conversation = await ctx.hub.find(owner, checkedId(id));
  if (!conversation) throw new ApiError(404, `you have no conversation ${id}`, 'conversation_not_found');
  return conversation;
}

function view(conversation: LiveConversation) {
  const { state, entry } = conversation;
  return {
    id: entry.id,
    graph: entry.graph,
    node: state?.current ?? null,
    ended: state?.ended ?? false,
    messages: messagesOf(state),
  };
}
