/**
 * The loopback OpenAI servers of the design benchmark, in a process of their own so that their work
 * (token counting, JSON) is not charged to the designer's CPU figures. design.bench.ts starts it with
 * the servers it wants as a JSON argument; it sends back their URLs and ends when its parent goes.
 */
import { cooperativeDesigner } from '../test/fixtures/design/replies.js';
import { startOpenAIServer } from '../test/support/openai-server.js';

/** One server: a cooperative model drawing graphs of `nodes` nodes, answering after `latencyMs`. */
export interface DesignServerSpec {
  nodes: number;
  latencyMs: number;
}

const specs = JSON.parse(process.argv[2] ?? '[]') as DesignServerSpec[];
const servers = await Promise.all(
  specs.map(({ nodes, latencyMs }) => startOpenAIServer({ latencyMs, reply: cooperativeDesigner(nodes) })),
);
process.send!(servers.map((server) => server.url));
process.on('disconnect', () => {
  void Promise.all(servers.map((server) => server.close())).then(() => process.exit(0));
});
