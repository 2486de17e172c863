/** What `meta-agent doctor` does (declared in ../commands/doctor.ts). */
import { instance } from '@viz-js/viz';
import type ivm from 'isolated-vm';
import { UserError } from '../../errors.js';
import { classify } from '../../llm/classify.js';
import { ROLES, createModels } from '../../llm/config.js';
import type { ResolvedEndpoints } from '../../llm/config.js';
import { listModels } from '../../llm/discovery.js';
import { labelLogitBias } from '../../llm/tokens.js';
import { isolatedVm } from '../../sandbox/isolated-vm.js';
import { endpointsFromOptions } from '../model-options.js';
import type { ModelOptionValues } from '../options.js';
import { writeOut } from '../terminal.js';

type Status = 'ok' | 'fail' | 'skip';

interface Check {
  status: Status;
  name: string;
  detail: string;
  fix?: string;
}

/** Runs every check, one line each; exit code 0: all passed, 1: a check failed, 2: no model configured. */
export async function runDoctor(options: ModelOptionValues): Promise<void> {
  const checks: Check[] = [];
  const report = (check: Check) => {
    checks.push(check);
    printCheck(check);
  };
  report(checkNode());
  report(checkSandbox());
  report(await checkGraphviz());
  const configured = await checkModels(options, report);
  const failed = checks.some((check) => check.status === 'fail');
  process.exitCode = configured ? (failed ? 1 : 0) : 2;
}

function checkNode(): Check {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const ok = major > 22 || (major === 22 && minor >= 12);
  return ok
    ? { status: 'ok', name: 'node', detail: `Node ${process.version}` }
    : {
        status: 'fail',
        name: 'node',
        detail: `Node ${process.version} is too old`,
        fix: 'install Node 22.12 or newer (24 recommended)',
      };
}

function checkSandbox(): Check {
  let isolate: ivm.Isolate | undefined;
  try {
    isolate = new (isolatedVm().Isolate)({ memoryLimit: 16 });
    const result: unknown = isolate.createContextSync().evalSync('1 + 1');
    if (result !== 2) throw new Error(`1 + 1 gave ${String(result)}`);
    return { status: 'ok', name: 'sandbox', detail: 'isolated-vm runs code (1 + 1 = 2)' };
  } catch (error) {
    return {
      status: 'fail',
      name: 'sandbox',
      detail: `isolated-vm does not work: ${oneLine(error)}`,
      fix: 'run node with --no-node-snapshot (bin/meta-agent.js does), and `npm rebuild isolated-vm`',
    };
  } finally {
    isolate?.dispose();
  }
}

async function checkGraphviz(): Promise<Check> {
  try {
    const svg = (await instance()).renderString('digraph { a -> b }', { format: 'svg' });
    if (!svg.includes('<svg')) throw new Error('the output is not SVG');
    return { status: 'ok', name: 'graphviz', detail: 'Graphviz (WASM) renders DOT to SVG' };
  } catch (error) {
    return {
      status: 'fail',
      name: 'graphviz',
      detail: `Graphviz does not load: ${oneLine(error)}`,
      fix: 'reinstall dependencies (`npm ci`); @viz-js/viz must be present',
    };
  }
}

/** Reports the model checks; false when nothing is configured (exit 2). */
async function checkModels(options: ModelOptionValues, report: (check: Check) => void): Promise<boolean> {
  let endpoints: ResolvedEndpoints;
  try {
    endpoints = await endpointsFromOptions(options);
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    const unconfigured = error.exitCode === 2;
    report({
      status: 'fail',
      name: unconfigured ? 'models' : 'endpoint',
      detail: error.message,
      fix: error.hint,
    });
    return !unconfigured;
  }
  for (const role of ROLES) {
    const endpoint = endpoints[role];
    if (endpoint.provider === 'scripted') {
      report({ status: 'ok', name: 'models', detail: `scripted answers from ${endpoint.script}; no server` });
      break;
    }
    report({
      status: 'ok',
      name: role,
      detail: `${endpoint.model} at ${endpoint.baseUrl}; ${endpoint.source}`,
    });
  }
  const reachable = await checkEndpoints(endpoints, report);
  const classifier = endpoints.classifier;
  if (classifier.provider === 'openai' && !reachable.has(classifier.baseUrl)) {
    report({
      status: 'skip',
      name: 'classify',
      detail: "not tried: the classifier's endpoint did not answer",
    });
  } else {
    report(await checkClassification(endpoints));
  }
  return true;
}

/** One line per distinct endpoint; returns the URLs that answered. */
async function checkEndpoints(
  endpoints: ResolvedEndpoints,
  report: (check: Check) => void,
): Promise<Set<string>> {
  const reachable = new Set<string>();
  const byUrl = new Map<string, { apiKey?: string; models: string[] }>();
  for (const endpoint of Object.values(endpoints)) {
    if (endpoint.provider !== 'openai') continue;
    const entry = byUrl.get(endpoint.baseUrl) ?? { apiKey: endpoint.apiKey, models: [] };
    entry.models.push(endpoint.model);
    byUrl.set(endpoint.baseUrl, entry);
  }
  for (const [baseUrl, { apiKey, models }] of byUrl) {
    try {
      const listed = await listModels(baseUrl, { apiKey });
      reachable.add(baseUrl);
      const missing = [...new Set(models)].filter(
        (model) => !listed.includes(model) && !listed.includes(`${model}:latest`),
      );
      const note = missing.length > 0 ? `; not listed: ${missing.join(', ')}` : '';
      report({
        status: 'ok',
        name: 'endpoint',
        detail: `${baseUrl} answered with ${listed.length} ${listed.length === 1 ? 'model' : 'models'}: ${sample(listed)}${note}`,
      });
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      report({ status: 'fail', name: 'endpoint', detail: error.message, fix: error.hint });
    }
  }
  return reachable;
}

async function checkClassification(endpoints: ResolvedEndpoints): Promise<Check> {
  const choices = ['seven', 'blue', 'Tuesday'];
  try {
    const { classifier } = await createModels(endpoints);
    const result = await classify(classifier, {
      prompt: 'Which of these is a colour?',
      choices,
      purpose: 'doctor',
    });
    const bias = classifier.scripted
      ? 'scripted'
      : labelLogitBias(classifier.modelName, ['A'])
        ? 'logit_bias on'
        : 'no logit_bias (tokenizer unknown)';
    const tries = result.attempts === 1 ? '1 try' : `${result.attempts} tries`;
    return {
      status: 'ok',
      name: 'classify',
      detail: `${classifier.modelName} answered ${result.label} (${choices[result.index]}) in ${tries}; ${bias}`,
    };
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    return { status: 'fail', name: 'classify', detail: error.message, fix: error.hint };
  }
}

function printCheck(check: Check): void {
  const fix = check.fix ? ` — fix: ${check.fix}` : '';
  writeOut(`${check.status.padEnd(4)}  ${check.name.padEnd(10)}  ${check.detail}${fix}\n`);
}

function sample(models: string[]): string {
  const shown = models.slice(0, 6).join(', ');
  return models.length > 6 ? `${shown}, … (${models.length - 6} more)` : shown;
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n', 1)[0] ?? '';
}
