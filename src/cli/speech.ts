/**
 * Speak mode (`run --speak`): the `speak` thought of each step said aloud, as AutoGPT's speak mode
 * does. The voice is the model server's speech endpoint (src/llm/media.ts), played by a local audio
 * player, where there are both; otherwise a local speech program; otherwise none, and the run says so
 * once and goes on silent. A speech endpoint that fails hands over to the program (or to silence) with
 * one notice. Utterances are said one after another, in the background: the run never waits for its
 * voice, except at its end, briefly, for what is left to say.
 *
 * The text is model output: it goes to a program on its standard input (or after `--`), never through a
 * shell or as an option, cut to a length, and each utterance is given a time to finish.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventBus } from '../events.js';
import type { OpenAIMedia } from '../llm/media.js';
import { programOnPath } from '../program-on-path.js';

/** Local audio players, in the order tried, with the arguments that play a WAV file and exit. */
const PLAYERS: ReadonlyArray<{ name: string; args: (file: string) => string[] }> = [
  { name: 'aplay', args: (file) => ['-q', file] },
  { name: 'paplay', args: (file) => [file] },
  { name: 'ffplay', args: (file) => ['-nodisp', '-autoexit', '-loglevel', 'quiet', file] },
  { name: 'afplay', args: (file) => [file] },
];

/** Local speech programs, in the order tried: the text on stdin, or after `--` (spd-say). */
const PROGRAMS: ReadonlyArray<{ name: string; args: (text: string) => string[]; stdin: boolean }> = [
  { name: 'espeak-ng', args: () => [], stdin: true },
  { name: 'espeak', args: () => [], stdin: true },
  { name: 'say', args: () => [], stdin: true },
  { name: 'spd-say', args: (text) => ['--wait', '--', text], stdin: false },
];

/** The most characters of one utterance: a speak thought is a sentence or two. */
const MAX_SPOKEN_CHARS = 1_000;
/** Longest one utterance may take to say before its player or program is stopped. */
const UTTERANCE_TIMEOUT_MS = 60_000;
/** Longest the end of a run waits for what is left to say. */
const DRAIN_TIMEOUT_MS = 30_000;

/** A voice for the run: `say` queues text, `close` waits (briefly) for the queue, then stops. */
export interface Speaker {
  say(text: string): void;
  close(): Promise<void>;
}

type Voice =
  | { kind: 'endpoint'; media: OpenAIMedia; player: (typeof PLAYERS)[number] & { file: string } }
  | { kind: 'program'; program: (typeof PROGRAMS)[number] & { file: string } }
  | { kind: 'silent' };

/**
 * The run's voice: `media` (the chatbot server's endpoints, none for a scripted or embedded model)
 * with a player, or a speech program from PATH, or silence; `notice` is told how it speaks, and when
 * it changes.
 */
async function openSpeaker(
  media: OpenAIMedia | undefined,
  notice: (message: string) => void,
  path = process.env.PATH ?? '',
): Promise<Speaker> {
  const player = firstOnPath(PLAYERS, path);
  const program = firstOnPath(PROGRAMS, path);
  const fallback: Voice = program ? { kind: 'program', program } : { kind: 'silent' };
  let voice: Voice = media && player ? { kind: 'endpoint', media, player } : fallback;
  const folder = await mkdtemp(join(tmpdir(), 'meta-agent-speech-'));
  const stop = new AbortController();
  let queue = Promise.resolve();
  let count = 0;

  notice(
    voice.kind === 'silent'
      ? `speak mode is silent: ${silentReason(media)} and no speech program (${PROGRAMS.map((p) => p.name).join(', ')})`
      : `speak mode: each step's speak thought is said through ${describe(voice)}`,
  );

  async function utter(text: string): Promise<void> {
    if (voice.kind === 'endpoint') {
      const { media: endpoint, player: chosen } = voice;
      try {
        const audio = await endpoint.speech(
          text,
          AbortSignal.any([stop.signal, AbortSignal.timeout(UTTERANCE_TIMEOUT_MS)]),
        );
        const file = join(folder, `${++count}.wav`);
        await writeFile(file, audio);
        await runQuietly(chosen.file, chosen.args(file), undefined, stop.signal);
        await rm(file, { force: true });
        return;
      } catch (error) {
        if (stop.signal.aborted) return;
        voice = fallback;
        notice(
          `speech failed (${(error as Error).message}); speak mode goes on ${voice.kind === 'silent' ? 'silent' : `through ${describe(voice)}`}`,
        );
      }
    }
    if (voice.kind === 'program') {
      const { program: chosen } = voice;
      await runQuietly(chosen.file, chosen.args(text), chosen.stdin ? text : undefined, stop.signal).catch(
        (error: unknown) => {
          if (stop.signal.aborted) return;
          voice = { kind: 'silent' };
          notice(`${chosen.name} failed (${(error as Error).message}); speak mode goes on silent`);
        },
      );
    }
  }

  return {
    say(text) {
      const spoken = text.replace(/\s+/g, ' ').trim().slice(0, MAX_SPOKEN_CHARS);
      if (spoken === '' || voice.kind === 'silent' || stop.signal.aborted) return;
      queue = queue.then(() => utter(spoken));
    },
    async close() {
      const drained = await Promise.race([
        queue.then(() => true),
        new Promise<false>((resolve) => setTimeout(resolve, DRAIN_TIMEOUT_MS, false).unref()),
      ]);
      if (!drained) notice('speak mode: the rest was not said, the run being over');
      stop.abort();
      await rm(folder, { recursive: true, force: true });
    },
  };
}

function describe(voice: Voice): string {
  if (voice.kind === 'endpoint') return `the model server's speech endpoint, played by ${voice.player.name}`;
  if (voice.kind === 'program') return voice.program.name;
  return 'nothing';
}

/** Why a run with no speech program is silent from the start: no endpoint, or nothing to play it. */
function silentReason(media: OpenAIMedia | undefined): string {
  if (!media) return 'no speech endpoint (the model is not on an OpenAI-compatible server)';
  return `no audio player (${PLAYERS.map((p) => p.name).join(', ')}) for the speech endpoint`;
}

/** The first entry whose program is on PATH, with where it is: it is started from there. */
function firstOnPath<T extends { name: string }>(
  entries: readonly T[],
  path: string,
): (T & { file: string }) | undefined {
  for (const entry of entries) {
    const file = programOnPath(entry.name, path);
    if (file !== undefined) return { ...entry, file };
  }
  return undefined;
}

/**
 * Runs `program` with `args` (no shell), `input` on its stdin, its output discarded; rejects with its
 * exit status or error, and stops it past the utterance timeout or when `signal` aborts.
 */
function runQuietly(
  program: string,
  args: string[],
  input: string | undefined,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'ignore'],
      signal,
      timeout: UTTERANCE_TIMEOUT_MS,
    });
    child.on('error', reject);
    child.on('close', (code, killed) => {
      if (code === 0) resolve();
      else reject(new Error(killed ? `stopped by ${killed}` : `exit status ${code}`));
    });
    if (input !== undefined) {
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(input);
    }
  });
}

/**
 * Speaks the `speak` thought of each step `bus` carries, through openSpeaker's voice; returns the stop,
 * which waits briefly for what is left to say.
 */
export async function speakSteps(
  bus: EventBus,
  media: OpenAIMedia | undefined,
  notice: (message: string) => void,
): Promise<() => Promise<void>> {
  const speaker = await openSpeaker(media, notice);
  const off = bus.on((event) => {
    if (event.type === 'goal.thoughts') speaker.say(event.thoughts.speak);
  });
  return async () => {
    off();
    await speaker.close();
  };
}
