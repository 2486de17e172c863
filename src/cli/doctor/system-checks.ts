/** The checks of what meta-agent needs on this machine, whatever the model: Node, the sandbox, Graphviz. */
import { instance } from '@viz-js/viz';
import type ivm from 'isolated-vm';
import { isolatedVm } from '../../sandbox/isolated-vm.js';
import type { Check } from './check.js';

/** Node 24 or newer, as package.json's engines and bin/meta-agent.js require. */
export function checkNode(): Check {
  const ok = Number(process.versions.node.split('.')[0]) >= 24;
  return ok
    ? { status: 'ok', name: 'node', detail: `Node ${process.version}` }
    : {
        status: 'fail',
        name: 'node',
        detail: `Node ${process.version} is too old`,
        fix: 'install Node 24 or newer',
      };
}

/** isolated-vm loads and runs code, as code nodes need. */
export function checkSandbox(): Check {
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
      detail: `isolated-vm does not work: ${firstLine(error)}`,
      fix: 'run node with --no-node-snapshot (bin/meta-agent.js does), and `npm rebuild isolated-vm`',
    };
  } finally {
    isolate?.dispose();
  }
}

/**
 * The Python runtime starts in its contained process and runs Python, as Python code nodes need; a
 * warning where it loaded from scratch, for want of the build's snapshot (seconds instead of under one).
 */
export async function checkPython(): Promise<Check> {
  const { PythonSandbox, PythonRuntime } = await import('../../sandbox/index.js');
  const runtime = new PythonRuntime();
  const python = PythonSandbox.create({}, runtime);
  const started = performance.now();
  try {
    const version = await python.evaluate("__import__('sys').version.split()[0]", {}, { node: 'doctor' });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const detail = `Pyodide runs Python ${String(version)} in its sandbox`;
    switch (runtime.snapshot) {
      case 'restored':
        return {
          status: 'ok',
          name: 'python',
          detail: `${detail} (started in ${seconds} s from the build's snapshot)`,
        };
      case 'refused':
        return {
          status: 'warn',
          name: 'python',
          detail: `${detail}, but started in ${seconds} s: Pyodide refused the build's snapshot in dist/python/`,
          fix: 'remove dist/python/ and run `npm run build` to make a new one: Python then starts in under a second',
        };
      default:
        return {
          status: 'warn',
          name: 'python',
          detail: `${detail}, but started in ${seconds} s without the build's snapshot (dist/python/)`,
          fix: 'run `npm run build` to make it: Python then starts in under a second',
        };
    }
  } catch (error) {
    return {
      status: 'fail',
      name: 'python',
      detail: `the Python sandbox does not start: ${firstLine(error)}`,
      fix: 'rebuild (`npm run build`) and reinstall dependencies (`npm ci`); graphs without Python code still run',
    };
  } finally {
    python.dispose();
    runtime.stop();
  }
}

/** Graphviz (WASM) renders DOT, as `design` and `export` need for SVG and HTML. */
export async function checkGraphviz(): Promise<Check> {
  try {
    const svg = (await instance()).renderString('digraph { a -> b }', { format: 'svg' });
    if (!svg.includes('<svg')) throw new Error('the output is not SVG');
    return { status: 'ok', name: 'graphviz', detail: 'Graphviz (WASM) renders DOT to SVG' };
  } catch (error) {
    return {
      status: 'fail',
      name: 'graphviz',
      detail: `Graphviz does not load: ${firstLine(error)}`,
      fix: 'reinstall dependencies (`npm ci`); @viz-js/viz must be present',
    };
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n', 1)[0] ?? '';
}
