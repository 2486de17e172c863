/**
 * The zero-latency model of the serve benchmark: an OpenAI-compatible server on 127.0.0.1
 * (`test/support/openai-server.ts`) that answers every call at once, in a process of its own so that
 * its work is charged neither to the server measured nor to the benchmark's clients. serve.bench.ts
 * starts it; it sends back its URL and ends when its parent goes.
 *
 * The chatbot says `ok`; the classifier, asked for one token, says `A` (the first choice). Usage is
 * given with every answer, so nobody counts tokens, and `logit_bias` is not read (an `A` is all the
 * classifier is ever asked for).
 */
import { startOpenAIServer, type ChatRequestBody } from '../test/support/openai-server.js';

/** Asked for one token: the classifier's question. */
const classifying = (body: ChatRequestBody) => (body.max_completion_tokens ?? body.max_tokens) === 1;

const usage = { promptTokens: 1, completionTokens: 1 };
const server = await startOpenAIServer({
  ignoreLogitBias: true,
  reply: (body) => ({ text: classifying(body) ? 'A' : 'ok', usage }),
});
process.send!(server.url);
process.on('disconnect', () => void server.close().then(() => process.exit(0)));
