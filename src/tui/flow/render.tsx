/**
 * The entry point `meta-agent flow run` uses: mounts the view of a flow pass on a terminal. Only this
 * module (through index.ts) loads Ink and React, so the CLI imports it lazily. The view only displays:
 * it reads no keys and leaves stdin out of raw mode, so Ctrl+C stays a SIGINT for the CLI's handler.
 */
import { render } from 'ink';
import type { EventBus } from '../../events.js';
import type { FlowRunState } from '../../flow/run-state.js';
import { renderOptions, type TerminalStreams } from '../render-options.js';
import { ThemeContext, themeFromEnv, type Theme } from '../theme.js';
import { createFlowStore } from './flow-store.js';
import { FlowLayout } from './FlowLayout.js';

/** What `renderFlowUI` needs. */
export interface FlowUIOptions extends TerminalStreams {
  bus: EventBus;
  /** The flow's name: the header shows it before the pass starts. */
  flow: string;
  /** The model that answers the nodes, for the status bar. */
  model: string;
  /** The scripted provider answers: the status bar says so. */
  scripted: boolean;
  /** Where the run's state is saved, as the user would type it. */
  savedTo?: string;
  /** The flow's `attempts` (answers a node may be asked for): a retry shows as `attempt n/N`. */
  attempts?: number;
  /**
   * The run as loaded before the pass: a pass in progress shows what its earlier steps settled (no
   * event of this session tells of them).
   */
  state?: FlowRunState;
  /** Defaults to the theme `NO_COLOR` selects. */
  theme?: Theme;
  /** Milliseconds, for the elapsed clock; default `Date.now`. */
  now?: () => number;
}

/** The mounted flow view. */
export interface FlowUI {
  /**
   * The pass is over (ended, stopped or failed): what is pending is drawn, and the clock stops. Resolves
   * once React has taken the last state, so an unmount right after keeps it on screen (a pass can end
   * inside one throttle window).
   */
  finish(): Promise<void>;
  /** Takes the view off the terminal (its last frame stays) and stops listening to the bus. */
  unmount(): void;
  /** Resolves once the view has unmounted. */
  waitUntilExit(): Promise<unknown>;
}

/** Mounts the view of the flow pass whose events come on `options.bus`. */
export function renderFlowUI(options: FlowUIOptions): FlowUI {
  const { bus, flow, model, scripted, savedTo, attempts, state, now, stdout, stdin, patchConsole } = options;
  const store = createFlowStore(bus, {
    flow,
    ...(attempts !== undefined && { attempts }),
    ...(state && { state }),
    ...(now && { now }),
  });
  const instance = render(
    <ThemeContext.Provider value={options.theme ?? themeFromEnv()}>
      <FlowLayout
        store={store}
        model={model}
        scripted={scripted}
        {...(savedTo !== undefined && { savedTo })}
        {...(now && { now })}
      />
    </ThemeContext.Provider>,
    renderOptions({ stdout, stdin, patchConsole }),
  );
  let mounted = true;
  return {
    finish: async () => {
      store.close();
      await new Promise((resolve) => setImmediate(resolve));
    },
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
