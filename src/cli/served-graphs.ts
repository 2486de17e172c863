/**
 * The graph and flow files a server (or a worker, which must hold the same ones) is given: each loaded
 * and checked, with its models, under its name, which must be unique.
 */
import { dirname, resolve } from 'node:path';
import { isUserError, UserError } from '../errors.js';
import type { FlowFile } from '../flow/schema.js';
import { unavailableModels } from '../llm/unavailable.js';
import { flowModels, type FlowModels } from './flow-models.js';
import { hasModelFlags } from './model-options.js';
import { isFlowPath, openFlow } from '../flow/load.js';
import type { Served } from '../serve/served.js';
import { formatFinding, openGraph } from './load-graph.js';
import { resolveModels } from './open-agent.js';
import type { GoalLoopPermissions } from '../agent/open.js';
import type { GoalLoopOptionValues, ModelOptionValues } from './options.js';
import { writeErr } from './terminal.js';

/** Each file, loaded and checked, under its graph's (or flow's) name, which must be unique. */
export async function loadServed(paths: string[], options: ModelOptionValues): Promise<Served[]> {
  const served: Served[] = [];
  for (const path of paths) {
    const folder = dirname(resolve(path));
    if (isFlowPath(path)) {
      const { flow, warnings } = await openFlow(path);
      for (const warning of warnings) writeErr(`warning: ${formatFinding(warning, '(flow)')}\n`);
      const { models, nodeModels } = await servedFlowModels(flow, options);
      served.push({ kind: 'flow', name: flow.name, flow, models, nodeModels, folder });
    } else {
      const { file } = await openGraph(path);
      const models = await resolveModels(options, file.config.models, 'fetch-on-first-call');
      served.push({ kind: 'agent', name: file.name, file, models, folder });
    }
    const name = served.at(-1)!.name;
    if (served.filter((item) => item.name === name).length > 1)
      throw new UserError(
        `two of the files are named "${name}"; a served graph is called by its name`,
        2,
        'rename one (its "name" field)',
      );
  }
  return served;
}

/** What goal runs of served agents may do: the process's own flags (never a request's or a file's). */
export function servedGoalLoop(options: GoalLoopOptionValues): GoalLoopPermissions {
  return {
    workspace: options.workspace ?? 'workspace',
    ...(options.allow && { allow: options.allow }),
    ...(options.yes && { yes: true }),
    ...(options.goalMaxSteps !== undefined && { maxSteps: options.goalMaxSteps }),
  };
}

/**
 * A served flow's models, its nodes' too (flow-models.ts), the embedded model fetched on its first
 * call; as for a served graph (open-agent.ts resolveModels), no model configured is an error of the
 * first call that needs one, unless a model flag was given.
 */
async function servedFlowModels(flow: FlowFile, options: ModelOptionValues): Promise<FlowModels> {
  try {
    return await flowModels(flow, options, true, { notReady: 'fetch-on-first-call' });
  } catch (error) {
    if (!isUserError(error) || hasModelFlags(options)) throw error;
    return { models: unavailableModels(error), nodeModels: new Map() };
  }
}
