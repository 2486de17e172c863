/**
 * Drives a full-screen program in a detached tmux session, the way a user at a terminal would: keys go
 * in with `send-keys`, the screen comes back with `capture-pane`. Each session gets a private tmux
 * server (`tmux -L NAME`), so parallel test files never see each other's sessions, and `kill()` stops
 * that server and whatever still runs in it.
 *
 * ```ts
 * const tmux = await TmuxSession.start({ command: ['node', 'app.js'], env, size: { columns: 120, rows: 40 } });
 * await tmux.waitFor((screen) => screen.includes('ready'));
 * await tmux.type('hello');
 * await tmux.kill();
 * ```
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** How to start the program. */
export interface TmuxStartOptions {
  /** The program and its arguments, passed on as they are (no shell parses them). */
  command: string[];
  cwd: string;
  /**
   * The whole environment of the program (tmux's server passes it on to the pane). Its `TERM` becomes
   * the pane's terminal type, which tmux would otherwise set to its own.
   */
  env: Record<string, string>;
  size: { columns: number; rows: number };
}

/** Options of {@link TmuxSession.waitFor}. */
export interface WaitOptions {
  /** Give up after this long; default 20 s. */
  timeoutMs?: number;
  /** Named in the error when the wait times out. */
  what?: string;
}

const POLL_MS = 100;

/** True when `tmux` can be run. */
export async function hasTmux(): Promise<boolean> {
  try {
    await run('tmux', ['-V']);
    return true;
  } catch {
    return false;
  }
}

/** One program running in its own tmux server. */
export class TmuxSession {
  /** Where the server listens; tmux leaves the file behind when the server stops. */
  private socketPath = '';

  private constructor(
    private readonly socket: string,
    private readonly env: Record<string, string>,
    /** Holds the file the program's exit status is written to. */
    private readonly dir: string,
  ) {}

  /** Starts `command` in a detached session of the given size on a new private server. */
  static async start(options: TmuxStartOptions): Promise<TmuxSession> {
    const dir = await mkdtemp(join(tmpdir(), 'meta-agent-tmux-'));
    const session = new TmuxSession(`meta-agent-e2e-${randomUUID()}`, options.env, dir);
    const { columns, rows } = options.size;
    await session.tmux(
      // No user config: a developer's ~/.tmux.conf (status line, key bindings) must not change the pane.
      '-f',
      '/dev/null',
      'start-server',
      ';',
      // Set before the program starts: the pane stays after it exits, so its last screen can still be read.
      'set-option',
      '-g',
      'remain-on-exit',
      'on',
      ...(options.env.TERM ? [';', 'set-option', '-g', 'default-terminal', options.env.TERM] : []),
      ';',
      'new-session',
      '-d',
      '-s',
      'main',
      '-x',
      String(columns),
      '-y',
      String(rows),
      '-c',
      options.cwd,
      // A shell writes the exit status to a file: tmux can leave an exited program unreaped for
      // seconds under load (the pane reads dead, with no status), so the pane's own status is unreliable.
      '/bin/sh',
      '-c',
      'status=$1; shift; "$@"; echo $? > "$status.tmp" && mv "$status.tmp" "$status"',
      'sh',
      session.statusFile,
      ...options.command,
    );
    session.socketPath = (await session.tmux('display-message', '-p', '#{socket_path}')).stdout.trim();
    return session;
  }

  /** The visible screen as plain text (no colours), one line per row. */
  async capture(): Promise<string> {
    return (await this.tmux('capture-pane', '-p', '-t', 'main')).stdout;
  }

  /** The scrollback and the screen: what a failure shows, since a program may clear its last words off screen. */
  private async captureWithHistory(): Promise<string> {
    return (await this.tmux('capture-pane', '-p', '-S', '-', '-t', 'main')).stdout.trimEnd();
  }

  /**
   * Polls the screen until `test` accepts it and returns that screen. Fails with the last screen when
   * the time runs out, or at once when the program has exited.
   */
  async waitFor(test: (screen: string) => boolean, options: WaitOptions = {}): Promise<string> {
    const deadline = Date.now() + (options.timeoutMs ?? 20_000);
    for (;;) {
      const screen = await this.capture();
      if (test(screen)) return screen;
      const exit = await this.exitStatus();
      const why = exit !== undefined ? `the program exited with status ${exit}` : undefined;
      if (why !== undefined || Date.now() > deadline)
        throw new Error(
          `waiting for ${options.what ?? 'the screen'}: ${why ?? 'timed out'}; the screen (after its scrollback) was:\n${await this.captureWithHistory()}`,
        );
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** Waits until the program has exited and returns its exit status. */
  async waitForExit(timeoutMs = 20_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const exit = await this.exitStatus();
      if (exit !== undefined) return exit;
      if (Date.now() > deadline)
        throw new Error(
          `the program did not exit; the screen (after its scrollback) was:\n${await this.captureWithHistory()}`,
        );
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** Types `text` literally (no key names are interpreted). */
  async type(text: string): Promise<void> {
    await this.tmux('send-keys', '-t', 'main', '-l', text);
  }

  /** Presses keys by tmux name: `Enter`, `Tab`, `C-c`. */
  async press(...keys: string[]): Promise<void> {
    await this.tmux('send-keys', '-t', 'main', ...keys);
  }

  /** Resizes the window, as a user dragging the terminal's edge would (tmux rewraps what is on screen). */
  async resize(size: { columns: number; rows: number }): Promise<void> {
    await this.tmux('resize-window', '-t', 'main', '-x', String(size.columns), '-y', String(size.rows));
  }

  /** Stops the server and the program and removes the socket; safe to call when they are gone. */
  async kill(): Promise<void> {
    await this.tmux('kill-server').catch(() => undefined);
    if (this.socketPath) await rm(this.socketPath, { force: true });
    await rm(this.dir, { recursive: true, force: true });
  }

  private get statusFile(): string {
    return join(this.dir, 'status');
  }

  /** The program's exit status (128 + the signal's number when a signal ended it), or undefined while it runs. */
  private async exitStatus(): Promise<number | undefined> {
    try {
      return Number(await readFile(this.statusFile, 'utf8'));
    } catch {
      return undefined;
    }
  }

  private tmux(...args: string[]) {
    return run('tmux', ['-L', this.socket, ...args], { env: this.env });
  }
}
