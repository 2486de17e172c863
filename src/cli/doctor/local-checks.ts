/**
 * Doctor's lines for the embedded model: the runtime, the model file, and, once both are there, what
 * the model runs on (threads, GPU, context). Doctor downloads and installs nothing: what is missing is a
 * warning that says what the first use will fetch, where to, and how to use a server instead, once the
 * hub has said it has the file; a hub that cannot be reached (offline) or refuses is a failure, with
 * the advice a first run would end with.
 */
import { UserError } from '../../errors.js';
import type { ResolvedEndpoints } from '../../llm/config.js';
import { modelsDir } from '../../llm/local/cache-dir.js';
import { cachedModel, formatSize, hubFileSize } from '../../llm/local/download.js';
import { LocalModel } from '../../llm/local/local-model.js';
import { parseModelRef, sizeNote } from '../../llm/local/model-ref.js';
import {
  RUNTIME_DOWNLOAD_SIZE,
  RUNTIME_PACKAGE,
  RUNTIME_VERSION,
  runtimeDir,
  runtimeInstalled,
} from '../../llm/local/runtime.js';
import { USE_A_SERVER, localEndpoints } from '../local-setup.js';
import { plural } from '../words.js';
import type { Check, Report } from './check.js';

/** Reports the embedded models the endpoints use; true when every one of them is ready to run. */
export async function checkLocalModels(endpoints: ResolvedEndpoints, report: Report): Promise<boolean> {
  const local = localEndpoints(endpoints);
  if (local.length === 0) return true;
  const runtime = runtimeInstalled();
  report(
    runtime
      ? { status: 'ok', name: 'runtime', detail: `${RUNTIME_PACKAGE} ${RUNTIME_VERSION} in ${runtimeDir()}` }
      : {
          status: 'warn',
          name: 'runtime',
          detail: `the embedded model's runtime is not installed: its first use installs ${RUNTIME_PACKAGE} ${RUNTIME_VERSION} (${RUNTIME_DOWNLOAD_SIZE} from the npm registry) into ${runtimeDir()}`,
          fix: '`meta-agent models pull` installs it now',
        },
  );
  let ready = runtime;
  for (const endpoint of local) {
    const check = await modelCheck(endpoint.model);
    report(check);
    if (check.status !== 'ok') ready = false;
    else if (runtime) report(await runsOn(endpoint.model));
  }
  return ready;
}

async function modelCheck(named: string): Promise<Check> {
  const ref = parseModelRef(named);
  if (ref.kind === 'file') return { status: 'ok', name: 'model', detail: `${named} (a file of your own)` };
  const cached = await cachedModel(ref);
  if (cached) {
    return { status: 'ok', name: 'model', detail: `${named} (${formatSize(cached.size)}) at ${cached.path}` };
  }
  try {
    await hubFileSize(ref);
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    // What a first run would end with: nothing can answer until the hub can be reached.
    return { status: 'fail', name: 'model', detail: error.message, fix: error.hint };
  }
  return {
    status: 'warn',
    name: 'model',
    detail: `${named} is not downloaded yet: its first use downloads it${sizeNote(named)}, once, into ${modelsDir()}`,
    fix: `\`meta-agent models pull ${named}\` fetches it now; ${USE_A_SERVER}`,
  };
}

/** Loads the model and says what it runs on. */
async function runsOn(named: string): Promise<Check> {
  try {
    const info = await new LocalModel({ ref: parseModelRef(named) }).info();
    const gpu =
      info.gpu === 'cpu'
        ? 'no GPU'
        : `GPU ${info.gpu}${info.gpuDevices.length > 0 ? ` (${info.gpuDevices.join(', ')})` : ''}, ${info.gpuLayers} layers on it`;
    return {
      status: 'ok',
      name: 'runs on',
      detail: `${plural(info.threads, 'CPU thread')}, ${gpu}, a ${info.contextSize}-token context; ${info.runtime}`,
    };
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    return { status: 'fail', name: 'runs on', detail: error.message, fix: error.hint };
  }
}
