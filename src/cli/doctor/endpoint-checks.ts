/**
 * One line per distinct model server: whether it answers, and whether it lists the models the roles use.
 * A server that lists no models is not ok: nothing can be asked of it unless a model is named, and then
 * only in the hope that the server serves more than it lists.
 */
import { UserError } from '../../errors.js';
import type { ResolvedEndpoints } from '../../llm/config.js';
import { listModels } from '../../llm/discovery.js';
import { ModelError } from '../../llm/errors.js';
import type { ModelRole } from '../../llm/types.js';
import type { Check, Report } from './check.js';
import { longerWaitFix } from './listing-wait.js';
import type { ListingWait } from './listing-wait.js';
import { addModelFix, unreachableFix } from './server-advice.js';

/** What each server listed, by base URL; undefined for a server whose check failed. */
export type Listings = ReadonlyMap<string, readonly string[] | undefined>;

interface Server {
  apiKey?: string;
  /** The models chosen for the roles this server takes. */
  models: Set<string>;
}

/** Checks each OpenAI-compatible server of `endpoints` once, reporting a line for each. */
export async function checkEndpoints(
  endpoints: ResolvedEndpoints,
  unchosen: ReadonlySet<ModelRole>,
  wait: ListingWait,
  report: Report,
): Promise<Listings> {
  const servers = new Map<string, Server>();
  for (const [role, endpoint] of Object.entries(endpoints) as [ModelRole, ResolvedEndpoints[ModelRole]][]) {
    if (endpoint.provider !== 'openai') continue;
    const server = servers.get(endpoint.baseUrl) ?? { apiKey: endpoint.apiKey, models: new Set() };
    if (!unchosen.has(role)) server.models.add(endpoint.model);
    servers.set(endpoint.baseUrl, server);
  }
  const listings = new Map<string, readonly string[] | undefined>();
  for (const [baseUrl, { apiKey, models }] of servers) {
    try {
      const listed = await listModels(baseUrl, { apiKey, timeoutMs: wait.ms });
      listings.set(baseUrl, listed);
      report(listingCheck(baseUrl, listed, [...models]));
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      listings.set(baseUrl, undefined);
      report(failedListing(baseUrl, error, wait));
    }
  }
  return listings;
}

function listingCheck(baseUrl: string, listed: readonly string[], wanted: readonly string[]): Check {
  if (listed.length === 0) {
    return wanted.length === 0
      ? {
          status: 'fail',
          name: 'endpoint',
          detail: `${baseUrl} answered, but lists no models`,
          fix: `${addModelFix(baseUrl)}, or name a model with --model`,
        }
      : {
          status: 'warn',
          name: 'endpoint',
          detail: `${baseUrl} answered, but lists no models, not even ${wanted.join(' or ')}, which ${wanted.length === 1 ? 'was' : 'were'} named`,
          fix: addModelFix(baseUrl, wanted[0]),
        };
  }
  const answered = `${baseUrl} answered with ${listed.length} ${listed.length === 1 ? 'model' : 'models'}: ${sample(listed)}`;
  // Ollama lists a model pulled without a tag as `name:latest`, and serves it by either name.
  const missing = wanted.filter((model) => !listed.includes(model) && !listed.includes(`${model}:latest`));
  if (missing.length === 0) return { status: 'ok', name: 'endpoint', detail: answered };
  return {
    status: 'warn',
    name: 'endpoint',
    detail: `${answered}; not listed: ${missing.join(', ')}`,
    fix: `${addModelFix(baseUrl, missing[0])}, or name a listed model with --model`,
  };
}

/** The failure, with a fix for this server: the generic hints suit no server in particular. */
function failedListing(baseUrl: string, error: UserError, wait: ListingWait): Check {
  const kind = error instanceof ModelError ? error.kind : undefined;
  const fix =
    kind === 'unreachable' ? unreachableFix(baseUrl) : kind === 'timeout' ? longerWaitFix(wait) : error.hint;
  return { status: 'fail', name: 'endpoint', detail: error.message, ...(fix ? { fix } : {}) };
}

function sample(models: readonly string[]): string {
  const shown = models.slice(0, 6).join(', ');
  return models.length > 6 ? `${shown}, … (${models.length - 6} more)` : shown;
}
