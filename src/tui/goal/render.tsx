/**
 * The entry point `meta-agent run` uses: mounts the goal view on a terminal and hands back the run's
 * approver. Only this module (through index.ts) loads Ink and React, so the CLI imports it lazily.
 */
import { render } from 'ink';
import type { Approver } from '../../autonomous/goal-loop.js';
import type { RunState } from '../../autonomous/run-state.js';
import type { EventBus } from '../../events.js';
import { renderOptions, type TerminalStreams } from '../render-options.js';
import { ThemeContext, themeFromEnv, type Theme } from '../theme.js';
import { createGoalStore } from './goal-store.js';
import { GoalLayout } from './GoalLayout.js';

/** What `renderGoalUI` needs. */
export interface GoalUIOptions extends TerminalStreams {
  bus: EventBus;
  /** The run before the loop starts: its header shows at once, and a resumed run's earlier steps. */
  state: RunState;
  /** The chatbot model's name, for the status bar. */
  model: string;
  /** The scripted provider answers: the status bar says so. */
  scripted: boolean;
  /** The run file, as the user would type it. */
  savedTo: string;
  /**
   * Ctrl+C pressed in the view. The view reads keys in raw mode, where the terminal sends Ctrl+C as a
   * key, not as SIGINT; by default it is passed on as SIGINT to this process, for the CLI's handler.
   */
  onCtrlC?: () => void;
  /** Defaults to the theme `NO_COLOR` selects. */
  theme?: Theme;
  /** Milliseconds, for the elapsed clock; default `Date.now`. */
  now?: () => number;
}

/** The mounted goal view. */
export interface GoalUI {
  /** Asks the user in the view; resolves with the answer they type. */
  approver: Approver;
  /** Shows a one-line notice (after the first Ctrl+C). */
  notice(text: string): void;
  /** The run ended: the end (from `goal.ended`) is on screen, and nothing more is asked. */
  finish(): void;
  /** Takes the view off the terminal (its last frame stays) and stops listening to the bus. */
  unmount(): void;
  /** Resolves once the view has unmounted. */
  waitUntilExit(): Promise<unknown>;
}

/** Mounts the goal view for a run whose events come on `options.bus`. */
export function renderGoalUI(options: GoalUIOptions): GoalUI {
  const { bus, state, model, scripted, savedTo, stdout, stdin, patchConsole } = options;
  const store = createGoalStore(bus, { state, ...(options.now && { now: options.now }) });
  const onCtrlC = options.onCtrlC ?? (() => process.kill(process.pid, 'SIGINT'));
  const instance = render(
    <ThemeContext.Provider value={options.theme ?? themeFromEnv()}>
      <GoalLayout
        store={store}
        model={model}
        scripted={scripted}
        savedTo={savedTo}
        onCtrlC={onCtrlC}
        {...(options.now && { now: options.now })}
      />
    </ThemeContext.Provider>,
    renderOptions({ stdout, stdin, patchConsole }),
  );
  let mounted = true;
  return {
    approver: store.approver,
    notice: (text) => store.notice(text),
    finish: () => store.close(),
    unmount() {
      if (!mounted) return;
      mounted = false;
      store.close();
      instance.unmount();
      store.dispose();
    },
    waitUntilExit: () => instance.waitUntilExit(),
  };
}
