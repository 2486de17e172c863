/**
 * TUI benchmark: how long one frame of the graph panel and status bar takes after a `node.entered`
 * event, for synthetic graphs of 10, 100 and 300 nodes, and of the whole chat view at each size.
 *
 * The view is mounted with Ink in debug mode (every commit is laid out and written at once, no frame
 * throttling) on a fake terminal that, like a real one, reports its rows (ink-testing-library's does
 * not, and Ink then runs `tput` on every frame to ask), fed by the same store the real UI uses. A frame is one `bus.emit` of a
 * `node.entered` event up to the frame's write: the store update, then (in the microtask React queues)
 * React's render, Ink's layout and the write to the fake terminal. The walk moves the current node
 * through the graph so the panel scrolls. Figures only; the target is one frame at 60 Hz (16 ms) at 100
 * nodes. Chalk only produces colour codes when it finds a colour terminal; `FORCE_COLOR=1` makes the
 * figures include them when the output is piped. `npm run bench` measures React's production build,
 * the one users run (bench/run.js sets NODE_ENV as bin/meta-agent.js does); run alone, this file measures
 * whichever NODE_ENV says, and the table names it.
 *
 * Run: `npx tsc -p . && FORCE_COLOR=1 NODE_ENV=production node dist/bench/tui.bench.js`
 */
import { EventEmitter } from 'node:events';
import { pathToFileURL } from 'node:url';
import { Box, render } from 'ink';
import { useMemo } from 'react';
import { EventBus } from '../src/events.js';
import { graphFileSchema } from '../src/graph/schema.js';
import { StaticGraph, type GraphView } from '../src/graph/view.js';
import { App } from '../src/tui/App.js';
import { GraphPanel, runGraph } from '../src/tui/components/GraphPanel.js';
import { runStatus, StatusBar } from '../src/tui/components/StatusBar.js';
import { layoutGraph } from '../src/tui/graph-layout.js';
import { colorTheme, ThemeContext } from '../src/tui/theme.js';
import { useRunState } from '../src/tui/use-run-state.js';
import { printTable, quantiles, verdict } from './stats.js';

/** One frame at 60 Hz. */
export const TARGET_MS = 16;

const SIZES = [10, 100, 300] as const;
const WARMUP_FRAMES = 30;
const FRAMES = 300;
const TERMINAL = { rows: 40, columns: 100 } as const;

/** Frame times for one view at one graph size. */
export interface TuiBenchRow {
  view: 'graph panel + status bar' | 'chat view';
  nodes: number;
  frames: number;
  medianMs: number;
  p95Ms: number;
  /** CPU time of this process per frame: unlike wall time, not inflated when other work shares the CPU. */
  cpuMedianMs: number;
}

export interface TuiBenchFigures {
  rows: TuiBenchRow[];
  /**
   * The graph panel + status bar at 100 nodes renders a frame within {@link TARGET_MS}, judged by the
   * median CPU time: wall time measures the machine's load as much as the frame.
   */
  meetsTarget: boolean;
}

/**
 * A graph of `count` nodes shaped like a designed agent: each node asks a two- or three-way question
 * leading further on, some lead back, so the layout has depth, fan-out and back edges.
 */
export function syntheticGraph(count: number): GraphView {
  const nodes = Array.from({ length: count }, (_, i) => {
    const targets = [`n${(2 * i + 1) % count}`, `n${(2 * i + 2) % count}`];
    if (i % 3 === 0) targets.push(`n${Math.floor(i / 2)}`);
    return {
      name: `n${i}`,
      action: i % 4 === 1 ? ('thought' as const) : ('chat' as const),
      instruction: `Step ${i}: ask the user about topic ${i} and note what they say.`,
      transitions: targets,
      transitionQuestion: `Where should the conversation go after step ${i}?`,
      transitionChoices: targets.map((t) => `go to ${t}`),
    };
  });
  return new StaticGraph(graphFileSchema.parse({ name: `synthetic${count}`, nodes }));
}

/** The graph panel and status bar, wired to the run state as the chat layout wires them. */
function PanelAndStatus({ bus, graph }: { bus: EventBus; graph: GraphView }) {
  const { state } = useRunState(bus, graph);
  const layout = useMemo(() => layoutGraph(graph), [graph, state.version]);
  return (
    <Box flexDirection="column">
      <GraphPanel
        {...runGraph(state)}
        layout={layout}
        selected={state.current}
        focused
        height={TERMINAL.rows - 3}
      />
      <StatusBar {...runStatus(state, 0)} />
    </Box>
  );
}

/** A terminal of {@link TERMINAL}'s size that counts the frames written to it. */
class FakeTerminal extends EventEmitter {
  readonly isTTY = true;
  readonly columns = TERMINAL.columns;
  readonly rows = TERMINAL.rows;
  frames = 0;
  write = (_chunk: string, callback?: () => void): boolean => {
    this.frames++;
    callback?.();
    return true;
  };
}

/** Mounts one view, walks the current node through the graph, and times each frame. */
async function measure(view: TuiBenchRow['view'], nodes: number): Promise<TuiBenchRow> {
  const graph = syntheticGraph(nodes);
  const bus = new EventBus();
  const stdout = new FakeTerminal();
  const tree =
    view === 'chat view' ? (
      <App mode="chat" bus={bus} graph={graph} onSubmit={() => {}} onQuit={() => {}} theme={colorTheme} />
    ) : (
      <ThemeContext.Provider value={colorTheme}>
        <PanelAndStatus bus={bus} graph={graph} />
      </ThemeContext.Provider>
    );
  const ink = render(tree, {
    stdout: stdout as unknown as NodeJS.WriteStream,
    // No raw mode: a stdin that is not a TTY keeps the view from taking over the bench's terminal.
    stdin: new EventEmitter() as unknown as NodeJS.ReadStream,
    debug: true,
    patchConsole: false,
    exitOnCtrlC: false,
  });
  // React subscribes to the store in an effect; let it run before the first event.
  await new Promise((resolve) => setImmediate(resolve));
  const times: number[] = [];
  const cpuTimes: number[] = [];
  for (let i = 0; i < WARMUP_FRAMES + FRAMES; i++) {
    // Stride through the graph so the current node jumps and the panel scrolls.
    const node = `n${(i * 7) % nodes}`;
    const before = stdout.frames;
    const cpu = process.cpuUsage();
    const started = performance.now();
    bus.emit({ type: 'node.entered', node, action: 'chat', depth: 0 });
    // React renders an external-store update in a microtask queued by the emit; awaiting one runs it.
    await Promise.resolve();
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    if (stdout.frames === before)
      throw new Error(`no frame was written for ${node}: the timing would be empty`);
    if (i >= WARMUP_FRAMES) {
      times.push(ms);
      cpuTimes.push((used.user + used.system) / 1000);
    }
  }
  ink.unmount();
  const { median, p95 } = quantiles(times);
  return {
    view,
    nodes,
    frames: times.length,
    medianMs: median,
    p95Ms: p95,
    cpuMedianMs: quantiles(cpuTimes).median,
  };
}

/** Measures every view at every size and prints a table. */
export async function runTuiBench(): Promise<TuiBenchFigures> {
  const rows: TuiBenchRow[] = [];
  for (const view of ['graph panel + status bar', 'chat view'] as const)
    for (const nodes of SIZES) rows.push(await measure(view, nodes));
  const target = rows.find((r) => r.view === 'graph panel + status bar' && r.nodes === 100)!;
  const figures = { rows, meetsTarget: target.cpuMedianMs <= TARGET_MS };
  printFigures(figures);
  return figures;
}

function printFigures({ rows, meetsTarget }: TuiBenchFigures): void {
  const react = process.env['NODE_ENV'] === 'production' ? 'production' : 'development';
  printTable(
    `TUI benchmark: frame time after node.entered, ${TERMINAL.columns}×${TERMINAL.rows}, Node ${process.version}, React ${react} build`,
    ['view', 'nodes', 'frames', 'median ms', 'p95 ms', 'cpu median ms', 'goal', ''],
    rows.map((r) => [
      r.view,
      String(r.nodes),
      String(r.frames),
      r.medianMs.toFixed(2),
      r.p95Ms.toFixed(2),
      r.cpuMedianMs.toFixed(2),
      `cpu ≤ ${TARGET_MS} ms`,
      verdict(r.cpuMedianMs <= TARGET_MS),
    ]),
  );
  console.log(
    `at 100 nodes, graph panel + status bar (the target this benchmark is held to): ${verdict(meetsTarget)}`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runTuiBench();
