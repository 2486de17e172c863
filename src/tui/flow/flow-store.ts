/**
 * The flow view's state outside React: the event fold (view-state.ts) and whether the pass is over. It
 * subscribes to the bus as soon as it is created, so no event emitted between mounting the view and
 * React's first effect is lost. Streamed answers arrive many times a second, from several nodes at
 * once: every event is folded at once, but the view is told of changes at most once per `throttleMs`.
 */
import type { EventBus } from '../../events.js';
import { initialFlowView, reduceFlowView, type FlowView, type FlowViewStart } from './view-state.js';

/** Default least time between two redraws. */
export const FLOW_THROTTLE_MS = 50;

/** Everything the flow view draws. */
export interface FlowScreen {
  view: FlowView;
  /** The CLI is done with the pass (ended, stopped or failed): nothing runs any more. */
  closed: boolean;
  /** When the view was mounted, and when it was closed: the elapsed clock. */
  startedAt: number;
  closedAt?: number;
}

export interface FlowStore {
  /** What the view draws: the state as of the last change it was told of. */
  getState(): FlowScreen;
  subscribe(listener: () => void): () => void;
  /** The pass is over: draws what is pending now and stops the clock. */
  close(): void;
  /** Stops listening to the bus and drops a redraw still pending. */
  dispose(): void;
}

export interface FlowStoreOptions extends FlowViewStart {
  /** Milliseconds, for the elapsed clock; default `Date.now`. */
  now?: () => number;
  /** Least milliseconds between two redraws (default FLOW_THROTTLE_MS); 0 redraws on every event. */
  throttleMs?: number;
}

/** Creates the store and subscribes it to `bus`. */
export function createFlowStore(bus: EventBus, options: FlowStoreOptions = {}): FlowStore {
  const now = options.now ?? Date.now;
  const throttleMs = options.throttleMs ?? FLOW_THROTTLE_MS;
  let latest: FlowScreen = { view: initialFlowView(options), closed: false, startedAt: now() };
  let shown = latest;
  const listeners = new Set<() => void>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let dirty = false;

  const publish = (): void => {
    dirty = false;
    if (shown === latest) return;
    shown = latest;
    for (const listener of listeners) listener();
  };
  /** Redraws at most once per window: the first change at once, the rest when the window closes. */
  const changed = (): void => {
    if (throttleMs <= 0) return publish();
    if (timer) {
      dirty = true;
      return;
    }
    publish();
    const windowEnds = (): void => {
      timer = undefined;
      if (!dirty) return;
      publish();
      timer = setTimeout(windowEnds, throttleMs);
      timer.unref?.();
    };
    timer = setTimeout(windowEnds, throttleMs);
    // A redraw must not keep the process alive once the caller is done.
    timer.unref?.();
  };
  const stopTimer = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  };

  const unsubscribe = bus.on((event) => {
    const view = reduceFlowView(latest.view, event);
    if (view === latest.view) return;
    latest = { ...latest, view };
    changed();
  });

  return {
    getState: () => shown,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      if (latest.closed) return;
      stopTimer();
      latest = { ...latest, closed: true, closedAt: now() };
      publish();
    },
    dispose() {
      unsubscribe();
      stopTimer();
    },
  };
}
