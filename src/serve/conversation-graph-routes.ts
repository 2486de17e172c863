/**
 * A conversation's own graph, for the page: drawn as it stands now (a self-editing agent's current
 * version, not its file), and, for a self-editing agent, the versions its edits made and what each one
 * changed, as `meta-agent history` shows them for a saved state.
 */
import { Hono } from 'hono';
import type { EditRecord } from '../graph/edit.js';
import type { GraphFile } from '../graph/schema.js';
import { VersionedGraph } from '../graph/versioned.js';
import { StaticGraph, type GraphView } from '../graph/view.js';
import type { ServeContext } from './context.js';
import { owned } from './conversation-routes.js';
import type { LiveConversation } from './conversations.js';
import type { Drawings } from './drawings.js';
import type { ServeEnv } from './env.js';
import { ApiError } from './errors.js';

export function conversationGraphRoutes(ctx: ServeContext, drawings: Drawings): Hono<ServeEnv> {
  const app = new Hono<ServeEnv>();

  app.get('/:id/drawing', async (c) => {
    const conversation = await owned(ctx, c.get('owner'), c.req.param('id'));
    const graph = conversation.interpreter.graph;
    return c.json({
      id: conversation.id,
      graph: conversation.entry.graph,
      version: graph.version,
      selfReferential: graph instanceof VersionedGraph,
      ...(await drawings.graph(fileOf(graph))),
    });
  });

  app.get('/:id/versions', async (c) => {
    const conversation = await owned(ctx, c.get('owner'), c.req.param('id'));
    const graph = versionsOf(conversation);
    let total = graph.fileAt(0).nodes.length;
    const loaded = { version: 0, op: 'loaded', nodes: [], totalNodes: total };
    const edits = graph.history().map((record) => {
      total += (record.after ? 1 : 0) - (record.before ? 1 : 0);
      return { ...summary(record), totalNodes: total };
    });
    return c.json({
      id: conversation.id,
      graph: graph.name,
      version: graph.version,
      data: [loaded, ...edits],
    });
  });

  app.get('/:id/versions/:n/diff', async (c) => {
    const conversation = await owned(ctx, c.get('owner'), c.req.param('id'));
    const graph = versionsOf(conversation);
    const text = c.req.param('n');
    const n = Number(text);
    if (!/^\d+$/.test(text) || n < 1 || n > graph.version)
      throw new ApiError(
        404,
        graph.version === 0
          ? `conversation ${conversation.id}'s agent has not edited itself yet: its graph is at version 0`
          : `no version "${text}" to diff; this agent's edits made versions 1 to ${graph.version}`,
        'version_not_found',
      );
    const record = graph.history()[n - 1]!;
    return c.json({ ...summary(record), changes: graph.diff(n - 1, n) });
  });

  return app;
}

/** The graph a conversation runs on now, as a file. */
function fileOf(graph: GraphView): GraphFile {
  if (graph instanceof VersionedGraph) return graph.toFile();
  // One that does not edit itself is its file, so all its conversations share one drawing.
  if (graph instanceof StaticGraph) return graph.file;
  throw new TypeError(
    'a served conversation runs on a VersionedGraph or a StaticGraph; this graph is neither',
  );
}

/** The versioned graph of a self-editing agent; a 404 that says why for any other. */
function versionsOf(conversation: LiveConversation): VersionedGraph {
  const graph = conversation.interpreter.graph;
  if (graph instanceof VersionedGraph) return graph;
  throw new ApiError(
    404,
    `conversation ${conversation.id}'s agent "${conversation.entry.graph}" does not edit itself, so its graph has no versions (only a self-referential graph's has)`,
    'not_self_referential',
  );
}

/** One version as listed: who made it, how, and which nodes it touched (by their names before and after). */
function summary(record: EditRecord) {
  const names = [record.before?.name, record.after?.name].filter((name) => name !== undefined);
  return {
    version: record.version,
    at: record.at,
    by: record.by,
    op: record.op,
    nodes: [...new Set(names)],
    ...(record.reverts !== undefined && { reverts: record.reverts }),
  };
}
