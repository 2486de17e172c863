/**
 * The embedded model's runtime: node-llama-cpp (llama.cpp for Node), installed the first time it is
 * needed rather than with meta-agent. Its npm package lists every platform's build as optional
 * dependencies, CUDA's alone over 300 MB, so a plain dependency would weigh on every user of a server.
 * Here it goes into the cache with this platform's CPU build (Metal on Apple silicon), about 85 MB on
 * disk; META_AGENT_LOCAL_GPU=cuda or vulkan adds that GPU build. The version is pinned: runtime-api.ts
 * declares its API.
 */
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, delimiter, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UserError } from '../../errors.js';
import { millisecondsFromEnv } from '../timeouts.js';
import { localCacheDir } from './cache-dir.js';
import type { NodeLlamaCpp } from './runtime-api.js';
import { isProcessAlive } from '../../process-alive.js';

export const RUNTIME_VERSION = '3.22.1';
export const RUNTIME_PACKAGE = 'node-llama-cpp';
/** What the CPU runtime downloads (the package, its dependencies and one platform build). */
export const RUNTIME_DOWNLOAD_SIZE = 'about 50 MB';

/** GPU builds that can be added to the CPU one, by META_AGENT_LOCAL_GPU. */
const GPU_BUILDS = { cuda: ['cuda', 'cuda-ext'], vulkan: ['vulkan'] } as const;
export type GpuBuild = keyof typeof GPU_BUILDS;

/**
 * The runtime's folder: META_AGENT_RUNTIME_DIR when set (a runtime shared by several caches, as the
 * tests do), else `runtime` in the cache; one subfolder per version.
 */
export function runtimeDir(env: NodeJS.ProcessEnv = process.env): string {
  const root = env.META_AGENT_RUNTIME_DIR || join(localCacheDir(env), 'runtime');
  return join(root, `${RUNTIME_PACKAGE}-${RUNTIME_VERSION}`);
}

function entryPoint(env: NodeJS.ProcessEnv): string {
  return join(runtimeDir(env), 'node_modules', RUNTIME_PACKAGE, 'dist', 'index.js');
}

export function runtimeInstalled(env: NodeJS.ProcessEnv = process.env): boolean {
  return existsSync(entryPoint(env));
}

const loaded = new Map<string, Promise<NodeLlamaCpp>>();

/** The installed runtime's module; a UserError saying how to install it when it is not. */
export function loadRuntime(env: NodeJS.ProcessEnv = process.env): Promise<NodeLlamaCpp> {
  const entry = entryPoint(env);
  let runtime = loaded.get(entry);
  if (!runtime) {
    if (!existsSync(entry)) {
      return Promise.reject(
        new UserError(
          `the embedded model's runtime (${RUNTIME_PACKAGE} ${RUNTIME_VERSION}) is not installed`,
          2,
          '`meta-agent models pull` installs it, with the model',
        ),
      );
    }
    runtime = import(pathToFileURL(entry).href) as Promise<NodeLlamaCpp>;
    loaded.set(entry, runtime);
  }
  return runtime;
}

/** The GPU build META_AGENT_LOCAL_GPU asks for, if any. */
export function requestedGpuBuild(env: NodeJS.ProcessEnv = process.env): GpuBuild | undefined {
  const value = env.META_AGENT_LOCAL_GPU?.trim().toLowerCase();
  if (!value || value === 'auto' || value === 'off' || value === 'cpu') return undefined;
  if (value in GPU_BUILDS) return value as GpuBuild;
  throw new UserError(
    `META_AGENT_LOCAL_GPU is "${env.META_AGENT_LOCAL_GPU}"`,
    2,
    'use cuda or vulkan (to install that GPU build), off (CPU only), or leave it unset',
  );
}

/** The npm packages of this platform's builds: the CPU one, then any GPU build asked for. */
export function platformBuilds(gpu: GpuBuild | undefined): string[] {
  const platform = { linux: 'linux', darwin: 'mac', win32: 'win' }[process.platform as string];
  const supported = ['linux-x64', 'linux-arm64', 'mac-arm64', 'mac-x64', 'win-x64', 'win-arm64'];
  const name = `${platform}-${process.arch}`;
  if (!platform || !supported.includes(name)) {
    throw new UserError(
      `the embedded model has no build for ${process.platform} on ${process.arch}`,
      2,
      'use a model server instead: --base-url URL (Ollama, LM Studio, llama.cpp server, vLLM) or OPENAI_API_KEY',
    );
  }
  const cpu = name === 'mac-arm64' ? 'mac-arm64-metal' : name;
  const extra =
    gpu && (platform === 'linux' || platform === 'win') && process.arch === 'x64' ? GPU_BUILDS[gpu] : [];
  return [cpu, ...extra.map((suffix) => `${name}-${suffix}`)].map(
    (build) => `@${RUNTIME_PACKAGE}/${build}@${RUNTIME_VERSION}`,
  );
}

/**
 * Installs the runtime with npm into a temporary folder, then moves it into place, so an interrupted
 * install leaves nothing half-made and two processes installing at once both end with a whole one.
 * Package scripts are not run: the prebuilt binary is all we use, and nothing is built from source.
 */
export async function installRuntime(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (runtimeInstalled(env)) return;
  const target = runtimeDir(env);
  const staging = `${target}.installing-${process.pid}`;
  await mkdir(dirname(target), { recursive: true });
  await removeStaleInstalls(target);
  await rm(staging, { recursive: true, force: true });
  try {
    const packages = [`${RUNTIME_PACKAGE}@${RUNTIME_VERSION}`, ...platformBuilds(requestedGpuBuild(env))];
    await npm(['install', '--prefix', staging, ...NPM_FLAGS, ...packages], env);
    if (runtimeInstalled(env)) return;
    // What is there without an entry point is an install someone removed files from: replace it.
    await rm(target, { recursive: true, force: true });
    try {
      await rename(staging, target);
    } catch (error) {
      // Another process moved its own install into place first.
      if (!runtimeInstalled(env)) throw error;
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Removes the staging folders of installs that were killed before they could clean up (the `finally`
 * above does not run on SIGKILL or a power cut): those whose process is no longer running. Each can
 * hold tens of megabytes, and nothing else would ever remove them.
 */
async function removeStaleInstalls(target: string): Promise<void> {
  const prefix = `${basename(target)}.installing-`;
  const names = await readdir(dirname(target)).catch(() => [] as string[]);
  for (const name of names) {
    const pidText = name.startsWith(prefix) ? name.slice(prefix.length) : '';
    if (!/^\d{1,9}$/.test(pidText)) continue;
    const pid = Number(pidText);
    if (pid === process.pid || isProcessAlive(pid)) continue;
    await rm(join(dirname(target), name), { recursive: true, force: true });
  }
}

const NPM_FLAGS = [
  '--no-save',
  '--no-package-lock',
  '--omit=optional',
  '--ignore-scripts',
  '--no-audit',
  '--no-fund',
  '--loglevel=error',
];

/** Longest wait for the registry's next bytes unless META_AGENT_TIMEOUT_MS says, as for the hub. */
const DEFAULT_NPM_IDLE_MS = 60_000;

/**
 * npm's retry and wait settings unless the environment sets them. npm's own defaults (two retries after
 * 10 s and 60 s, each per package, and 5 minutes without data) made an install against a registry
 * that cannot be reached take over two minutes to say so; one quick retry still rides out a blip.
 * A setting in .npmrc is overridden too (npm ranks the environment above it); an npm_config_*
 * variable of the user's wins.
 */
function npmWaits(env: NodeJS.ProcessEnv): Record<string, string> {
  const idleMs = millisecondsFromEnv('META_AGENT_TIMEOUT_MS') ?? DEFAULT_NPM_IDLE_MS;
  const waits: Record<string, string> = {
    npm_config_fetch_retries: '1',
    npm_config_fetch_retry_mintimeout: '1000',
    npm_config_fetch_retry_maxtimeout: '5000',
    npm_config_fetch_timeout: String(Math.round(idleMs)),
  };
  const set = new Set(Object.keys(env).map((name) => name.toLowerCase().replaceAll('-', '_')));
  return Object.fromEntries(Object.entries(waits).filter(([name]) => !set.has(name)));
}

/** Runs npm's own CLI with this Node, so no shell and no PATH lookup is involved. */
function npm(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const cli = npmCli(env);
  const merged = { ...process.env, ...env };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], {
      env: { ...merged, ...npmWaits(merged) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    child.once('error', (error) => reject(installFailed(error.message, 1)));
    child.once('close', (code) => {
      if (code === 0) return resolve();
      const offline = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH|network/i.test(stderr);
      reject(installFailed(npmReason(stderr) ?? `npm exited with ${code}`, offline ? 2 : 1));
    });
  });
}

/**
 * The line of npm's error report that says what went wrong (`request to … failed, reason: …`), not
 * the code, syscall and log-file lines around it.
 */
function npmReason(stderr: string): string | undefined {
  const lines = stderr
    .split('\n')
    .filter((line) => /^npm (error|ERR!)/i.test(line))
    .map((line) => line.replace(/^npm (error|ERR!)\s*/i, '').trim())
    .filter((line) => line !== '' && !/^(code|syscall|errno|A complete log)\b/i.test(line));
  return lines.find((line) => /failed|reason|not found|404/i.test(line)) ?? lines[0];
}

function installFailed(reason: string, exitCode: 1 | 2): UserError {
  return new UserError(
    `could not install the embedded model's runtime (${RUNTIME_PACKAGE} ${RUNTIME_VERSION}) from the npm registry: ${reason}`,
    exitCode,
    'check the connection to the npm registry and try again, or use a model server: --base-url URL, or OPENAI_API_KEY',
  );
}

/**
 * npm's CLI script: the one running us when meta-agent was started by npm, else the one installed
 * beside this Node (lib/node_modules/npm on Unix, node_modules/npm on Windows), else the one the `npm`
 * on PATH leads to (a Node installed apart from its npm).
 */
function npmCli(env: NodeJS.ProcessEnv): string {
  const fromNpm = env.npm_execpath;
  if (fromNpm && /npm-cli\.js$/.test(fromNpm) && existsSync(fromNpm)) return fromNpm;
  const besideNode = [dirname(process.execPath)];
  const onPath = (env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  for (const dir of [...besideNode, ...onPath]) {
    const candidates = [
      join(dir, '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
      join(dir, 'node_modules', 'npm', 'bin', 'npm-cli.js'),
    ];
    const launcher = join(dir, 'npm');
    if (existsSync(launcher)) candidates.unshift(realpathSync(launcher));
    const found = candidates.find((path) => /npm-cli\.js$/.test(path) && existsSync(path));
    if (found) return found;
  }
  throw installFailed(`npm was found neither beside ${process.execPath} nor on PATH`, 2);
}
