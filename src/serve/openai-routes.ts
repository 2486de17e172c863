/**
 * The OpenAI-compatible routes: `GET /v1/models` and `POST /v1/chat/completions`, so an existing client
 * (the `openai` SDKs, Open WebUI, LibreChat) talks to a served graph as to a model. The model is the
 * graph's name. Only the new user message goes to the graph: the conversation's own state decides what
 * the agent knows. The conversation is the one `X-Conversation-Id` names (made on first use), or the
 * one whose history the client sends back, or a new one when the client's history holds no reply yet.
 */
import { randomBytes } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import type { TokenUsage } from '../events.js';
import type { ServeContext } from './context.js';
import type { LiveConversation } from './conversations.js';
import type { ServeEnv } from './env.js';
import { ApiError, errorBody } from './errors.js';
import { extendHistory, historyStart, mergeUserRuns, type Said } from './history.js';
import { checkedId, readBody } from './request.js';
import { conversationKeyed, requestAfter, requestKeyed } from './turn-request.js';
import { turnFailure, withDeadline } from './turn-failure.js';

const contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const message = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
});
const completionRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(message).min(1, 'at least one message is needed'),
  stream: z.boolean().nullish(),
});
type Message = z.infer<typeof message>;

export function openAiRoutes(ctx: ServeContext): Hono<ServeEnv> {
  const app = new Hono<ServeEnv>();

  app.get('/models', (c) =>
    c.json({
      object: 'list',
      data: [...ctx.served.values()].map((served) => ({
        id: served.name,
        object: 'model',
        created: 0,
        owned_by: 'meta-agent',
        kind: served.kind,
      })),
    }),
  );

  app.post('/chat/completions', async (c) => {
    const body = await readBody(c, completionRequest);
    const said = mergeUserRuns(body.messages.flatMap(spoken));
    const lastReply = said.findLastIndex((m) => m.role === 'assistant');
    const text = said.slice(lastReply + 1)[0]?.content;
    if (text === undefined || text.trim() === '')
      throw new ApiError(
        400,
        'the last message must be a user message: the one to answer',
        'no_user_message',
        'messages',
      );
    agentNamed(ctx, body.model);
    const owner = c.get('owner');
    const history = said.slice(0, lastReply + 1);
    // The digest of what the client has seen finds the conversation; on Postgres it (or else the
    // request's idempotency key) also names the turn, so that a retried request gets the recorded reply.
    const seen = history.length > 0 ? extendHistory(historyStart(owner, body.model), history) : undefined;
    const key = ctx.hub.durable ? c.req.header('Idempotency-Key') : undefined;
    const request =
      seen !== undefined
        ? requestAfter(seen, text)
        : key !== undefined
          ? requestKeyed(owner, key, text)
          : undefined;
    const conversation = await conversationFor(ctx, c, owner, body.model, { seen, request, key });
    c.header('X-Conversation-Id', conversation.id);
    const wait = !/\bwait=0\b/.test(c.req.header('Prefer') ?? '');
    const reply = {
      id: `chatcmpl-${randomBytes(12).toString('base64url')}`,
      created: nowSeconds(),
      model: body.model,
    };
    if (!body.stream) {
      const result = await withDeadline(
        ctx,
        conversation,
        ctx.track(conversation.turn(text, { wait, ...(request && { request }) })),
      );
      return c.json({
        ...reply,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: result.reply },
            finish_reason: 'stop',
            logprobs: null,
          },
        ],
        usage: usageOf(result.usage),
      });
    }
    // The turn starts before the stream, so a refusal (busy, too many waiting) is an HTTP error.
    const deltas: string[] = [];
    let wake = () => {};
    const turn = ctx.track(
      conversation.turn(text, {
        wait,
        ...(request && { request }),
        onDelta: (delta) => {
          deltas.push(delta);
          wake();
        },
      }),
    );
    return streamSSE(c, async (stream) => {
      const chunk = (delta: object, finish: 'stop' | null = null, usage?: TokenUsage) =>
        stream.writeSSE({
          data: JSON.stringify({
            ...reply,
            object: 'chat.completion.chunk',
            choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
            ...(usage && { usage: usageOf(usage) }),
          }),
        });
      await chunk({ role: 'assistant', content: '' });
      const done = withDeadline(ctx, conversation, turn).then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
      for (;;) {
        const outcome = await Promise.race([
          done,
          new Promise<undefined>((resolve) => (wake = () => resolve(undefined))),
        ]);
        for (const delta of deltas.splice(0)) await chunk({ content: delta });
        if (outcome === undefined) continue;
        if ('result' in outcome) await chunk({}, 'stop', outcome.result.usage);
        else {
          const failure = asApiError(outcome.error, ctx);
          await stream.writeSSE({
            data: JSON.stringify(errorBody(failure.status, failure.message, failure.code)),
          });
        }
        break;
      }
      await stream.writeSSE({ data: '[DONE]' });
    });
  });

  return app;
}

/** The served agent named `model`: 404 for no graph of that name, 400 for a flow. */
function agentNamed(ctx: ServeContext, model: string): void {
  const served = ctx.served.get(model);
  if (!served)
    throw new ApiError(
      404,
      `no graph "${model}" is served here; GET /v1/models lists them: ${[...ctx.served.keys()].join(', ')}`,
      'model_not_found',
      'model',
    );
  if (served.kind === 'flow')
    throw new ApiError(
      400,
      `"${model}" is a flow, not an agent: run its passes with POST /v1/flows/${model}/passes`,
      'model_is_flow',
      'model',
    );
}

/** How a request names its conversation and turn (turn-request.ts), beyond X-Conversation-Id. */
interface Naming {
  /** The digest of the history the client sent; undefined when it sent no reply yet. */
  seen: string | undefined;
  /** On Postgres: what names the turn, when the request says. */
  request: string | undefined;
  /** On Postgres: the request's Idempotency-Key. */
  key: string | undefined;
}

/** The conversation the request continues, or starts. */
async function conversationFor(
  ctx: ServeContext,
  c: Context<ServeEnv>,
  owner: string,
  graph: string,
  { seen, request, key }: Naming,
): Promise<LiveConversation> {
  const named = c.req.header('X-Conversation-Id');
  // On Postgres a first message's idempotency key names its conversation, so that its retry finds it.
  const id =
    named !== undefined
      ? checkedId(named)
      : seen === undefined && key !== undefined
        ? conversationKeyed(owner, key)
        : undefined;
  if (id !== undefined) {
    const conversation =
      (await ctx.hub.find(owner, id, { current: false })) ?? (await madeOrFound(ctx, owner, graph, id));
    if (conversation.entry.graph !== graph)
      throw new ApiError(
        400,
        `conversation ${id} is with "${conversation.entry.graph}", not "${graph}"`,
        'wrong_model',
        'model',
      );
    return conversation;
  }
  if (seen === undefined) return ctx.hub.create(owner, graph);
  const recognised = await ctx.hub.recognise(owner, seen, request);
  if (!recognised)
    throw new ApiError(
      404,
      'no conversation of yours has this history (the server keeps each conversation where its last reply left it); send X-Conversation-Id, or start over with no earlier replies',
      'conversation_not_found',
      'messages',
    );
  return recognised;
}

/** A new conversation `id`, or the one another server made under it a moment ago. */
async function madeOrFound(
  ctx: ServeContext,
  owner: string,
  graph: string,
  id: string,
): Promise<LiveConversation> {
  try {
    return await ctx.hub.create(owner, graph, id);
  } catch (error) {
    const found = error instanceof ApiError && error.code === 'conversation_exists';
    const conversation = found ? await ctx.hub.find(owner, id) : undefined;
    if (!conversation) throw error;
    return conversation;
  }
}

/** What a message says, as the graph would hear it; system messages are the client's own framing. */
function spoken(message: Message): Said[] {
  if (message.role === 'system' || message.role === 'developer') return [];
  if (message.role !== 'user' && message.role !== 'assistant')
    throw new ApiError(
      400,
      `a served agent takes user and assistant messages, not "${message.role}" ones (it runs its own tools)`,
      'unsupported_role',
      'messages',
    );
  const content =
    typeof message.content === 'string'
      ? message.content
      : (message.content ?? []).map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');
  return [{ role: message.role, content }];
}

function asApiError(error: unknown, ctx: ServeContext): ApiError {
  return error instanceof ApiError ? error : turnFailure(error, ctx);
}

function usageOf({ promptTokens, completionTokens }: TokenUsage) {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
