/**
 * What `meta-agent doctor` does (declared in ../commands/doctor.ts): the checks, in order, each line
 * printed as soon as it is known. The checks themselves live in ../doctor/.
 */
import { UserError } from '../../errors.js';
import { ROLES } from '../../llm/config.js';
import type { ResolvedEndpoints } from '../../llm/config.js';
import type { ModelRole } from '../../llm/types.js';
import { formatCheck } from '../doctor/check.js';
import type { Check, Report } from '../doctor/check.js';
import { checkClassification } from '../doctor/classification-check.js';
import { checkEndpoints } from '../doctor/endpoint-checks.js';
import { checkLocalModels } from '../doctor/local-checks.js';
import type { Listings } from '../doctor/endpoint-checks.js';
import { listingWait } from '../doctor/listing-wait.js';
import { checkMcpServers } from '../doctor/mcp-checks.js';
import { checkSearch } from '../doctor/search-check.js';
import type { ListingWait } from '../doctor/listing-wait.js';
import { resolveSetup } from '../doctor/model-setup.js';
import { checkGraphviz, checkNode, checkPython, checkSandbox } from '../doctor/system-checks.js';
import type { McpOptionValues } from '../mcp-setup.js';
import type { ModelOptionValues } from '../options.js';
import { writeOut } from '../terminal.js';

/** Runs every check; exit code 0: none failed (warnings allowed), 1: one failed, 2: models not configured. */
export async function runDoctor(options: ModelOptionValues & McpOptionValues): Promise<void> {
  const checks: Check[] = [];
  const report: Report = (check) => {
    checks.push(check);
    writeOut(formatCheck(check));
  };
  // Python's runtime starts in a process of its own, and Graphviz compiles its WebAssembly, while the
  // checks before them run.
  const python = checkPython();
  const graphviz = checkGraphviz();
  report(checkNode());
  report(checkSandbox());
  report(await python);
  report(await graphviz);
  const configured = await checkModels(options, report);
  await checkMcpServers(options, report);
  report(await checkSearch());
  const failed = checks.some((check) => check.status === 'fail');
  process.exitCode = configured ? (failed ? 1 : 0) : 2;
}

/** Reports the model checks; false when the models are not configured (exit 2). */
async function checkModels(options: ModelOptionValues, report: Report): Promise<boolean> {
  let wait: ListingWait;
  try {
    wait = listingWait();
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    report({ status: 'fail', name: 'timeout', detail: error.message, fix: error.hint });
    return false;
  }
  const setup = await resolveSetup(options);
  if (!setup.endpoints) {
    const { failure } = setup;
    const unconfigured = failure.exitCode === 2;
    report({
      status: 'fail',
      name: unconfigured ? 'models' : 'endpoint',
      detail: failure.message,
      fix: failure.hint,
    });
    return !unconfigured;
  }
  const { endpoints, unchosen, failure } = setup;
  if (endpoints.classifier.provider === 'scripted') {
    report({
      status: 'ok',
      name: 'models',
      detail: `scripted answers from ${endpoints.classifier.script}; no server`,
    });
    report(await checkClassification(endpoints));
    return true;
  }
  for (const role of ROLES) {
    const endpoint = endpoints[role];
    if (endpoint.provider === 'scripted' || unchosen.has(role)) continue;
    const where = endpoint.provider === 'openai' ? `at ${endpoint.baseUrl}` : 'embedded';
    report({ status: 'ok', name: role, detail: `${endpoint.model} ${where}; ${endpoint.source}` });
  }
  const localReady = await checkLocalModels(endpoints, report);
  let serverFailed = false;
  const listings = await checkEndpoints(endpoints, unchosen, wait, (check) => {
    serverFailed ||= check.status === 'fail';
    report(check);
  });
  // Choosing the models failed though no server check did (a server that changed in between): the
  // reason must still show.
  if (failure && !serverFailed) {
    report({ status: 'fail', name: 'models', detail: failure.message, fix: failure.hint });
  }
  report(await classificationCheck(endpoints, unchosen, listings, localReady));
  return true;
}

/** The classification round trip, or why it is not tried. */
async function classificationCheck(
  endpoints: ResolvedEndpoints,
  unchosen: ReadonlySet<ModelRole>,
  listings: Listings,
  localReady: boolean,
): Promise<Check> {
  const { classifier } = endpoints;
  if (classifier.provider === 'local' && !localReady) {
    return {
      status: 'skip',
      name: 'classify',
      detail: 'not tried: the embedded model is not ready (see above)',
    };
  }
  if (classifier.provider !== 'openai') return checkClassification(endpoints);
  const listed = listings.get(classifier.baseUrl);
  if (listed === undefined) {
    return {
      status: 'skip',
      name: 'classify',
      detail: "not tried: the classifier's server failed its check",
    };
  }
  if (unchosen.has('classifier')) {
    const reason =
      listed.length === 0
        ? `${classifier.baseUrl} lists no model to ask; name one with --classifier-model or -m to try it anyway`
        : 'no model could be chosen for the classifier';
    return { status: 'skip', name: 'classify', detail: `not tried: ${reason}` };
  }
  return checkClassification(endpoints);
}
