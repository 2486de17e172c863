/**
 * What is wrong with a flow before it runs, as findings like a graph's (errors stop a run; warnings do
 * not): names that lead nowhere, cycles (named), references a node cannot resolve (in a prompt, a
 * compose template or a tool's arguments), code that does not parse, answer schemas that cannot be
 * checked.
 */
import { z } from 'zod';
import { codeSyntaxError } from '../graph/code-syntax.js';
import type { Finding } from '../graph/lint.js';
import { closestName } from '../graph/names.js';
import { describeCycle, findCycle } from './dag.js';
import { baseStructure } from './changes.js';
import { composeAsksPrompt, composedDependencies, composeTemplates } from './compose.js';
import type { FlowFile, FlowNode } from './schema.js';
import { referencesIn } from './template.js';
import { argumentTexts } from './tool-arguments.js';

export type { Finding };

/** Every finding, errors first within each node, in file order. */
export function lintFlow(flow: FlowFile): Finding[] {
  const findings: Finding[] = [];
  const names = flow.nodes.map((node) => node.name);
  const seen = new Set<string>();
  for (const node of flow.nodes) {
    if (seen.has(node.name))
      findings.push({ severity: 'error', node: node.name, message: 'another node has the same name' });
    seen.add(node.name);
    findings.push(...nodeFindings(flow, node, names));
  }
  const cycle = findCycle(baseStructure(flow));
  if (cycle)
    findings.push({
      severity: 'error',
      message: `the dependencies form a cycle: ${describeCycle(cycle)}`,
      hint: 'a flow is evaluated in dependency order ("after" included), so one of these nodes must not depend on the next',
    });
  if (flow.config.system)
    findings.push(...databaseFindings(flow, flow.config.system, undefined, 'config.system'));
  return findings;
}

function nodeFindings(flow: FlowFile, node: FlowNode, names: string[]): Finding[] {
  const findings: Finding[] = [];
  const error = (message: string, hint?: string) =>
    findings.push({ severity: 'error', node: node.name, message, ...(hint && { hint }) });
  const warn = (message: string, hint?: string) =>
    findings.push({ severity: 'warning', node: node.name, message, ...(hint && { hint }) });
  const deps = new Set<string>();
  for (const dep of node.dependencies) {
    if (dep === node.name) error('it depends on itself');
    else if (!names.includes(dep)) {
      const guess = closestName(dep, names);
      error(`it depends on "${dep}", which is not a node${guess ? `; did you mean "${guess}"?` : ''}`);
    } else if (deps.has(dep)) warn(`it lists "${dep}" twice among its dependencies`);
    deps.add(dep);
  }
  if (node.model === 'embedder') error('its model is the embedder, which does not answer prompts');
  else if (node.model !== undefined && /^local:/.test(node.model))
    error(
      `its model is "${node.model}": a flow file may ask for the embedded model ("local") but not name a GGUF`,
      'choose the GGUF yourself: --model local:REF, or META_AGENT_<ROLE>_MODEL for a role of config.models',
    );
  for (const earlier of node.after) {
    if (earlier === node.name) error('it runs after itself');
    else if (!names.includes(earlier)) {
      const guess = closestName(earlier, names);
      error(`it runs after "${earlier}", which is not a node${guess ? `; did you mean "${guess}"?` : ''}`);
    } else if (deps.has(earlier))
      warn(`it lists "${earlier}" both as a dependency and in "after"`, 'a dependency already runs first');
  }
  for (const dep of composedDependencies(node))
    if (!deps.has(dep))
      error(
        `its compose list shows the answer of "${dep}", but it does not depend on "${dep}"`,
        `add "${dep}" to its dependencies, so it runs first`,
      );
  const texts: Array<[field: string, text: string | undefined]> = [
    ['prompt', node.prompt],
    ...composeTemplates(node),
    ...Object.entries(node.tool?.arguments ?? {}).flatMap(([key, value]) =>
      argumentTexts(value, key).map(({ at, text }): [string, string] => [`argument ${at}`, text]),
    ),
  ];
  for (const [field, text] of texts) {
    if (text === undefined) continue;
    for (const ref of referencesIn(text)) {
      if (ref.kind === 'prompt' && !field.startsWith('compose'))
        error(`its ${field} uses ${ref.text}, which only a compose template can`);
      if (ref.kind === 'out' && !deps.has(ref.node))
        error(
          `its ${field} uses ${ref.text}, but it does not depend on "${ref.node}"`,
          node.after.includes(ref.node)
            ? `"after" only orders the nodes; move "${ref.node}" to its dependencies to read its answer`
            : `add "${ref.node}" to its dependencies, so it runs first`,
        );
    }
    findings.push(...databaseFindings(flow, text, node.name, field));
  }
  if (!composeAsksPrompt(node))
    warn('its compose template leaves out $prompt$, so its own prompt is never asked');
  if (node.prompt?.trim() === '' && node.compose === undefined) error('its prompt is empty');
  const code = node.afterQuery?.code;
  if (code !== undefined) {
    const problem = codeSyntaxError(code);
    if (problem) error(`its afterQuery code does not parse: ${problem}`);
  }
  const schema = node.afterQuery?.schema;
  if (schema !== undefined) {
    try {
      z.fromJSONSchema(schema as never);
    } catch (problem) {
      error(`its afterQuery schema cannot be used: ${(problem as Error).message}`);
    }
  }
  if (node.fallback !== undefined && node.afterQuery === undefined)
    warn(
      'it has a fallback but no afterQuery step, so no answer is ever rejected and the fallback is never used',
    );
  return findings;
}

/** A `$db.key$` whose key neither the database nor an input starts with: maybe an after-query step writes it. */
function databaseFindings(flow: FlowFile, text: string, node: string | undefined, field: string): Finding[] {
  const known = new Set([...Object.keys(flow.database), ...Object.keys(flow.inputs)]);
  return referencesIn(text).flatMap((ref): Finding[] => {
    if (ref.kind !== 'db' || ref.path.length === 0 || known.has(ref.path[0]!)) return [];
    return [
      {
        severity: 'warning',
        ...(node !== undefined && { node }),
        message: `its ${field} uses ${ref.text}, but neither the database nor an input has "${ref.path[0]}"`,
        hint: 'unless an after-query step writes it first, it reads as None; give it a value in "database"',
      },
    ];
  });
}
