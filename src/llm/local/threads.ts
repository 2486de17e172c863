/**
 * How many CPU threads the embedded model computes with. llama.cpp's threads meet at a barrier after
 * every operation of every token, and spin while they wait: one thread the machine cannot run at that
 * moment holds up all the others. node-llama-cpp's own default is the larger of 4 and the physical
 * cores, which on a 2-core machine that other work keeps busy took a short answer from about 1 s (one
 * thread) to 72–160 s. So, unless META_AGENT_LOCAL_THREADS says, the model takes the cores this
 * process may use less those other work keeps busy, and one when that is all there is.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { UserError } from '../../errors.js';

/** What the machine offers this process, as read when the model loads. */
export interface MachineCpus {
  /** CPUs this process may run on (its affinity mask): os.availableParallelism(). */
  parallelism: number;
  /** CPUs' worth of time its cgroup may use (a container's CPU limit); undefined when unlimited. */
  quota: number | undefined;
  /** The 1-minute load average: runnable threads, ours and other work's (0 on Windows). */
  load: number;
}

/** The thread count META_AGENT_LOCAL_THREADS sets; undefined when it is unset, empty or `auto`. */
export function requestedThreads(env: NodeJS.ProcessEnv): number | undefined {
  const text = env.META_AGENT_LOCAL_THREADS?.trim() ?? '';
  if (text === '' || text.toLowerCase() === 'auto') return undefined;
  const threads = Number(text);
  if (Number.isInteger(threads) && threads > 0) return threads;
  throw new UserError(
    `META_AGENT_LOCAL_THREADS is "${env.META_AGENT_LOCAL_THREADS}"`,
    2,
    'set it to a whole number of CPU threads (1 is fastest on a busy machine), or auto, or leave it unset',
  );
}

/**
 * The threads for a model on `physicalCores` (what llama.cpp counts): the fewest of those, the CPUs
 * this process may run on and its cgroup's quota, less the 1-minute load average rounded (the work
 * already running there), and at least one. Read before the model computes anything, the load is
 * other work's.
 */
export function threadsFor(physicalCores: number, machine: MachineCpus = machineCpus()): number {
  const cores = Math.max(1, Math.min(physicalCores, machine.parallelism, machine.quota ?? Infinity));
  return Math.min(cores, Math.max(1, Math.round(cores - machine.load)));
}

/** This machine's CPUs as this process sees them now. */
function machineCpus(): MachineCpus {
  return { parallelism: availableParallelism(), quota: cgroupQuota(), load: loadavg()[0] ?? 0 };
}

/**
 * The CPU quota of the cgroup a container runs in, in CPUs (rounded up): cgroup v2's cpu.max
 * (`QUOTA PERIOD`, or `max`), else v1's cfs_quota_us over cfs_period_us (-1: none).
 */
function cgroupQuota(): number | undefined {
  const v2 = readText('/sys/fs/cgroup/cpu.max')?.split(/\s+/);
  if (v2) return cpus(Number(v2[0]), Number(v2[1]));
  const quota = Number(readText('/sys/fs/cgroup/cpu/cpu.cfs_quota_us'));
  return cpus(quota, Number(readText('/sys/fs/cgroup/cpu/cpu.cfs_period_us')));
}

function cpus(quota: number, period: number): number | undefined {
  return quota > 0 && period > 0 ? Math.max(1, Math.ceil(quota / period)) : undefined;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}
