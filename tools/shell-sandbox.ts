/**
 * Command lines for `execute_shell`, run by /bin/sh in the workspace. Contained by bubblewrap: new
 * user, mount, PID, network, IPC and UTS namespaces, the workspace the only folder mounted writable (at
 * /workspace, its `.meta-agent/` hidden under an empty tmpfs), the system's programs and libraries
 * (/usr) read-only, nothing else of the host's files (no /etc but what programs need to start, no home,
 * no /tmp of the host), no network but the sandbox's own loopback, no capabilities, a user that is
 * `nobody` inside, and a sandbox that dies with this process. Or, only when the user opted into it
 * explicitly, not contained at all (`unconfined`): then only the environment, the folder, the time and
 * the output are kept in bounds. Either way the environment is scrubbed (no key of ours gets through),
 * and each stream's output is kept within a cap (its beginning and end).
 */
import { spawn, spawnSync } from 'node:child_process';
import { lstatSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { programOnPath } from '../src/program-on-path.js';
import type { ShellLimits, ShellOutcome, ShellRunner } from './command.js';
import { HeadAndTail } from './head-and-tail.js';
import { RESERVED_FOLDER } from './workspace-path.js';

/**
 * How command lines are contained: a bubblewrap sandbox (the program found on the PATH), or nothing,
 * where bubblewrap cannot work and the user chose to go without it.
 */
export type ShellContainment = { kind: 'bubblewrap'; program: string } | { kind: 'unconfined' };

/** 3,000 bytes of each stream: both fit whole in the 8,000 characters the goal loop keeps of a result. */
const DEFAULT_SHELL_LIMITS: ShellLimits = { timeoutMs: 60_000, outputBytes: 3_000 };

/** Where the workspace is inside the sandbox. */
const SANDBOX_WORKSPACE = '/workspace';

/** The programs a command finds: the system's. */
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Top-level folders programs are started from: bound read-only, or recreated as the links they are. */
const SYSTEM_FOLDERS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** Files of /etc that programs need to start (the dynamic linker's cache, Debian's alternatives). */
const SYSTEM_FILES = ['/etc/ld.so.cache', '/etc/alternatives'];

/** `nobody`: the user inside the sandbox, whoever runs meta-agent. */
const NOBODY = '65534';

/** The environment a command line gets: nothing of ours, only what a shell expects. */
function scrubbedEnv(home: string): Record<string, string> {
  return { PATH, HOME: home, LANG: 'C.UTF-8', TMPDIR: '/tmp' };
}

/** bubblewrap's arguments for a sandbox around `root`, up to the command. */
function bubblewrapArgs(root: string): string[] {
  const system = SYSTEM_FOLDERS.flatMap((folder) => {
    const kind = kindOf(folder);
    if (kind === 'link') return ['--symlink', readlinkSync(folder), folder];
    return kind === 'folder' ? ['--ro-bind', folder, folder] : [];
  });
  const env = Object.entries(scrubbedEnv(SANDBOX_WORKSPACE)).flatMap(([name, value]) => [
    '--setenv',
    name,
    value,
  ]);
  return [
    ...['--unshare-all', '--unshare-user', '--uid', NOBODY, '--gid', NOBODY],
    ...['--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--clearenv', ...env],
    ...['--ro-bind', '/usr', '/usr', ...system],
    ...SYSTEM_FILES.flatMap((file) => ['--ro-bind-try', file, file]),
    ...['--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp'],
    ...['--bind', root, SANDBOX_WORKSPACE, '--tmpfs', `${SANDBOX_WORKSPACE}/${RESERVED_FOLDER}`],
    ...['--chdir', SANDBOX_WORKSPACE, '--'],
  ];
}

function kindOf(path: string): 'link' | 'folder' | undefined {
  try {
    const stat = lstatSync(path);
    return stat.isSymbolicLink() ? 'link' : stat.isDirectory() ? 'folder' : undefined;
  } catch {
    return undefined;
  }
}

/**
 * bubblewrap as found on `path` (the user's PATH), tried once with the same sandbox a command gets,
 * around an empty command; or why it cannot contain commands on this machine.
 */
export function findBubblewrap(
  path: string = process.env.PATH ?? '',
): { program: string } | { problem: string } {
  const program = programOnPath('bwrap', path);
  if (program === undefined) return { problem: 'bubblewrap (bwrap) is not installed' };
  const probe = spawnSync(program, [...bubblewrapArgs(tmpdir()), '/bin/true'], {
    env: scrubbedEnv(tmpdir()),
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (probe.error) return { problem: `bubblewrap (${program}) could not be started: ${probe.error.message}` };
  if (probe.status !== 0)
    return {
      problem: `bubblewrap (${program}) cannot make its sandbox on this machine: ${probe.stderr.trim() || `exit status ${probe.status}`}`,
    };
  return { program };
}

/** Runs command lines in one workspace under one containment and its limits. */
export class ShellSandbox implements ShellRunner {
  readonly containment: ShellContainment;
  readonly #root: string;
  readonly #limits: ShellLimits;

  constructor(root: string, containment: ShellContainment, limits: Partial<ShellLimits> = {}) {
    this.#root = root;
    this.containment = containment;
    this.#limits = { ...DEFAULT_SHELL_LIMITS, ...limits };
  }

  get limits(): ShellLimits {
    return this.#limits;
  }

  /** Runs `commandLine` with no input; resolves when it has ended, however it ended. */
  run(commandLine: string, signal: AbortSignal): Promise<ShellOutcome> {
    const shell = ['/bin/sh', '-c', commandLine];
    const child =
      this.containment.kind === 'bubblewrap'
        ? spawn(this.containment.program, [...bubblewrapArgs(this.#root), ...shell], {
            env: scrubbedEnv(SANDBOX_WORKSPACE),
            stdio: ['ignore', 'pipe', 'pipe'],
            detached: true,
          })
        : spawn(shell[0]!, shell.slice(1), {
            cwd: this.#root,
            env: scrubbedEnv(this.#root),
            stdio: ['ignore', 'pipe', 'pipe'],
            detached: true,
          });
    return new Promise((resolve, reject) => {
      const out = new HeadAndTail(this.#limits.outputBytes);
      const err = new HeadAndTail(this.#limits.outputBytes);
      let timedOut = false;
      // The whole process group: what the shell started goes with it (bubblewrap's sandbox dies with it).
      const kill = () => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // It has ended already.
        }
        // A process that left the group (setsid) may still hold the pipes: the run ends without it.
        child.stdout.destroy();
        child.stderr.destroy();
      };
      child.stdout.on('data', (chunk: Buffer) => out.add(chunk));
      child.stderr.on('data', (chunk: Buffer) => err.add(chunk));
      const timer = setTimeout(() => {
        timedOut = true;
        kill();
      }, this.#limits.timeoutMs);
      const onAbort = () => kill();
      signal.addEventListener('abort', onAbort, { once: true });
      child.on('error', (error) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        reject(error);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve({
          exitCode: code,
          stdout: out.text(),
          stderr: err.text(),
          ...(timedOut && { timedOut }),
        });
      });
    });
  }
}
