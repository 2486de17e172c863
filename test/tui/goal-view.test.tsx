import { cleanup } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Approval } from '../../src/autonomous/authorize.js';
import { newRunState, type RunState } from '../../src/autonomous/run-state.js';
import type { AgentEvent, GoalSpend, Thoughts } from '../../src/events.js';
import { createGoalStore } from '../../src/tui/goal/goal-store.js';
import { GoalLayout } from '../../src/tui/goal/GoalLayout.js';
import { renderGoalUI } from '../../src/tui/goal/index.js';
import { initialGoalView, reduceGoalView, type GoalView } from '../../src/tui/goal/view-state.js';
import { ThemeContext, monoTheme } from '../../src/tui/theme.js';
import { eventBus, FakeKeyboard, FakeTerminal, KEY, mount, settle, SIZE } from './helpers.js';

afterEach(cleanup);

const THOUGHTS: Thoughts = {
  text: 'I should write the notes first.',
  reasoning: 'The goal asks for a notes file.',
  plan: '- write notes.txt\n- check it\n- finish',
  criticism: 'I could be faster.',
  speak: 'Writing the notes now.',
};

const WRITE = { name: 'write_to_file', args: { file: 'notes.txt', text: 'hello\nworld' } };

function run(overrides: Partial<RunState> = {}): RunState {
  return {
    ...newRunState({
      name: 'Scribe',
      role: 'an AI that writes notes',
      goals: ['Write notes.txt', 'Say when it is done'],
      workspace: '/tmp/ws',
      budget: { maxSteps: 50 },
    }),
    ...overrides,
  };
}

/** The events of one step that writes a file after the user approves it. */
function approvedStep(step: number, output = 'Wrote 11 bytes to notes.txt'): AgentEvent[] {
  return [
    { type: 'goal.step', step },
    { type: 'goal.thoughts', step, thoughts: THOUGHTS },
    { type: 'goal.command', step, ...WRITE },
    { type: 'goal.awaiting', step, ...WRITE, reason: 'write_to_file needs your approval' },
    { type: 'goal.authorized', step, name: WRITE.name, by: 'user' },
    {
      type: 'goal.result',
      step,
      name: WRITE.name,
      ok: true,
      output,
      files: [{ path: 'notes.txt', change: 'write' }],
    },
  ];
}

function fold(events: AgentEvent[], view: GoalView = initialGoalView()): GoalView {
  return events.reduce(reduceGoalView, view);
}

const SPEND: GoalSpend = { steps: 0, tokens: 0, costUsd: 0, elapsedMs: 0 };

describe('reduceGoalView', () => {
  it('starts empty without a run, and adds the header once goal.started comes', () => {
    const started: AgentEvent = {
      type: 'goal.started',
      name: 'Scribe',
      role: 'writes',
      goals: ['a', 'b'],
      workspace: '/ws',
      resumed: false,
    };
    const view = fold([started, started]);
    expect(view.items).toEqual([
      { id: 0, kind: 'header', name: 'Scribe', role: 'writes', goals: ['a', 'b'], workspace: '/ws' },
    ]);
  });

  it('holds a step’s thoughts until its command, then prints both as one item', () => {
    const thinking = fold([
      { type: 'goal.step', step: 1 },
      { type: 'goal.thoughts', step: 1, thoughts: THOUGHTS },
    ]);
    expect(thinking.items).toEqual([]);
    expect(thinking.current).toEqual({ step: 1, phase: 'thinking', thoughts: THOUGHTS });
    const chosen = reduceGoalView(thinking, { type: 'goal.command', step: 1, ...WRITE });
    expect(chosen.items).toEqual([
      {
        id: 0,
        kind: 'step',
        step: 1,
        thoughts: THOUGHTS,
        command: {
          name: 'write_to_file',
          args: [
            { name: 'file', value: 'notes.txt' },
            { name: 'text', value: 'hello\nworld' },
          ],
        },
      },
    ]);
    expect(chosen.current).toMatchObject({ step: 1, phase: 'chosen' });
  });

  it('follows a command through asking, authorization and its result, recording the files', () => {
    const events = approvedStep(1);
    const asking = fold(events.slice(0, 4));
    expect(asking.current).toMatchObject({ phase: 'asking', reason: 'write_to_file needs your approval' });
    const running = reduceGoalView(asking, events[4]!);
    expect(running.current).toMatchObject({ phase: 'running', by: 'user' });
    const done = reduceGoalView(running, events[5]!);
    expect(done.current).toBeUndefined();
    expect(done.items.at(-1)).toEqual({
      id: 1,
      kind: 'outcome',
      step: 1,
      name: 'write_to_file',
      by: 'user',
      outcome: {
        kind: 'result',
        ok: true,
        output: 'Wrote 11 bytes to notes.txt',
        files: [{ path: 'notes.txt', change: 'write' }],
      },
    });
    expect(done.files).toEqual([{ path: 'notes.txt', change: 'write' }]);
  });

  it('keeps each file once, with its last change, the latest last', () => {
    const result = (step: number, files: Array<{ path: string; change: 'read' | 'write' | 'delete' }>) =>
      ({ type: 'goal.result', step, name: 'x', ok: true, output: '', files }) as AgentEvent;
    const view = fold([
      result(1, [{ path: 'a.txt', change: 'write' }]),
      result(2, [{ path: 'b.txt', change: 'read' }]),
      result(3, [{ path: 'a.txt', change: 'delete' }]),
    ]);
    expect(view.files).toEqual([
      { path: 'b.txt', change: 'read' },
      { path: 'a.txt', change: 'delete' },
    ]);
  });

  it('counts down commands that run without asking, and stops counting when one is asked for', () => {
    const view = fold([
      { type: 'goal.step', step: 1 },
      { type: 'goal.command', step: 1, ...WRITE },
      { type: 'goal.authorized', step: 1, name: WRITE.name, by: 'continuous', continuousLeft: 2 },
    ]);
    expect(view.continuousLeft).toBe(2);
    const asked = fold(
      [
        { type: 'goal.step', step: 2 },
        { type: 'goal.awaiting', step: 2, ...WRITE, reason: 'you pressed Ctrl+C' },
      ],
      view,
    );
    expect(asked.continuousLeft).toBe(0);
    expect(asked.current?.command?.name).toBe('write_to_file');
  });

  it('marks a refused command with the user’s feedback', () => {
    const view = fold([
      ...approvedStep(1).slice(0, 4),
      { type: 'goal.refused', step: 1, name: WRITE.name, feedback: 'write to a.txt instead' },
    ]);
    expect(view.items.at(-1)).toMatchObject({
      kind: 'outcome',
      name: 'write_to_file',
      outcome: { kind: 'refused', feedback: 'write to a.txt instead' },
    });
    expect(view.current).toBeUndefined();
  });

  it('prints an unusable answer under its step number, with its thoughts when it had some', () => {
    const view = fold([
      { type: 'goal.step', step: 1 },
      { type: 'goal.thoughts', step: 1, thoughts: THOUGHTS },
      { type: 'goal.unusable', step: 1, problem: 'no command', streak: 1 },
      { type: 'goal.step', step: 2 },
      { type: 'goal.unusable', step: 2, problem: 'not JSON', streak: 2 },
    ]);
    expect(view.items).toEqual([
      { id: 0, kind: 'step', step: 1, thoughts: THOUGHTS },
      { id: 1, kind: 'outcome', step: 1, outcome: { kind: 'unusable', problem: 'no command', streak: 1 } },
      { id: 2, kind: 'step', step: 2 },
      { id: 3, kind: 'outcome', step: 2, outcome: { kind: 'unusable', problem: 'not JSON', streak: 2 } },
    ]);
  });

  it('prints warnings as their own items; a resume warning settles the step left running', () => {
    const state = run({
      used: { steps: 1, promptTokens: 0, completionTokens: 0, costUsd: 0, elapsedMs: 0 },
      pending: { step: 1, thoughts: THOUGHTS, command: WRITE, phase: 'running', by: 'user' },
    });
    const view = fold(
      [
        {
          type: 'goal.warning',
          step: 1,
          kind: 'resume',
          message: 'write_to_file was running; not run again',
        },
        { type: 'goal.warning', step: 1, kind: 'loop', message: 'you repeat yourself' },
      ],
      initialGoalView(state),
    );
    expect(view.items.slice(-3)).toMatchObject([
      { kind: 'outcome', step: 1, name: 'write_to_file', outcome: { kind: 'interrupted' } },
      { kind: 'warning', warning: 'resume', message: 'write_to_file was running; not run again' },
      { kind: 'warning', warning: 'loop', message: 'you repeat yourself' },
    ]);
    expect(view.current).toBeUndefined();
  });

  it('takes the spend from goal.spend and the end from goal.ended', () => {
    const spend = { ...SPEND, steps: 2, tokens: 900, maxSteps: 5 };
    const spent = reduceGoalView(initialGoalView(), { type: 'goal.spend', ...spend });
    expect(spent.spend).toEqual(spend);
    const ended = reduceGoalView(spent, {
      type: 'goal.ended',
      reason: 'task_complete',
      detail: 'notes written',
      ...spend,
      steps: 3,
    });
    expect(ended.ended).toEqual({ reason: 'task_complete', detail: 'notes written' });
    expect(ended.spend.steps).toBe(3);
  });

  it('stops the command asked for when the user ends the run with n', () => {
    const view = fold([
      ...approvedStep(1).slice(0, 4),
      { type: 'goal.ended', reason: 'user', detail: 'the user answered n', ...SPEND },
    ]);
    expect(view.items.at(-1)).toMatchObject({ kind: 'outcome', outcome: { kind: 'stopped' } });
  });

  it('returns the same view for events it does not show', () => {
    const view = initialGoalView();
    expect(reduceGoalView(view, { type: 'user', text: 'hi' })).toBe(view);
  });

  it('strips terminal control sequences from model and tool text and caps its length', () => {
    const view = fold([
      { type: 'goal.step', step: 1 },
      {
        type: 'goal.thoughts',
        step: 1,
        thoughts: { ...THOUGHTS, speak: '\u001b[31mred\u001b[0m\u001b]52;c;aGk=\u0007 done\rnow' },
      },
      { type: 'goal.command', step: 1, name: 'read_file', args: { file: '\u001b[2Jx.txt' } },
      {
        type: 'goal.result',
        step: 1,
        name: 'read_file',
        ok: true,
        output: 'y'.repeat(20_000),
        files: [],
      },
    ]);
    const step = view.items[0]!;
    expect(step.kind === 'step' && step.thoughts?.speak).toBe('red done\\u000dnow');
    expect(step.kind === 'step' && step.command?.args[0]?.value).toBe('x.txt');
    const outcome = view.items[1]!;
    const output =
      outcome.kind === 'outcome' && outcome.outcome.kind === 'result' ? outcome.outcome.output : '';
    expect(output.length).toBeLessThan(8100);
    expect(output).toMatch(/… \(12000 more characters\)$/);
  });

  it('shows a resumed run’s history, files, pending command and spend from its state', () => {
    const state = run({
      used: { steps: 3, promptTokens: 1000, completionTokens: 234, costUsd: 0, elapsedMs: 5000 },
      history: [
        {
          kind: 'command',
          step: 1,
          thoughts: THOUGHTS,
          command: WRITE,
          ok: true,
          output: 'Wrote it',
          files: [{ path: 'notes.txt', change: 'write' }],
        },
        { kind: 'notice', step: 1, text: 'a budget is low' },
        { kind: 'unusable', step: 2, answer: 'blah', problem: 'no JSON' },
      ],
      pending: { step: 3, thoughts: THOUGHTS, command: WRITE, phase: 'answered' },
      continuousLeft: 2,
    });
    const view = initialGoalView(state);
    expect(view.items.map((item) => item.kind)).toEqual([
      'header',
      'resumed',
      'step',
      'outcome',
      'warning',
      'step',
      'outcome',
      'step',
    ]);
    expect(view.current).toMatchObject({ step: 3, phase: 'chosen', command: { name: 'write_to_file' } });
    expect(view.files).toEqual([{ path: 'notes.txt', change: 'write' }]);
    expect(view.spend).toEqual({ steps: 3, tokens: 1234, costUsd: 0, elapsedMs: 5000, maxSteps: 50 });
    expect(view.continuousLeft).toBe(2);
  });
});

/** The goal view on a fixed-size terminal, in the mono theme, with its store, bus and keys. */
function mountGoal(
  options: { state?: RunState; model?: string; scripted?: boolean; now?: () => number } = {},
) {
  const { bus, emit } = eventBus();
  const state = options.state ?? run();
  const now = options.now ?? (() => 1_000);
  const store = createGoalStore(bus, { state, now });
  const onCtrlC = vi.fn();
  const ui = mount(
    <ThemeContext.Provider value={monoTheme}>
      <GoalLayout
        store={store}
        model={options.model ?? 'scripted-model'}
        scripted={options.scripted ?? true}
        savedTo="ws/.meta-agent/runs/scribe-1.run.json"
        onCtrlC={onCtrlC}
        size={SIZE}
        now={now}
      />
    </ThemeContext.Provider>,
  );
  /** Asks as the loop does: the awaiting event, then the approver. */
  const ask = async (step = 1) => {
    await emit(
      { type: 'goal.step', step },
      { type: 'goal.thoughts', step, thoughts: THOUGHTS },
      { type: 'goal.command', step, ...WRITE },
      { type: 'goal.awaiting', step, ...WRITE, reason: 'write_to_file needs your approval' },
    );
    const answer = store.approver.ask(
      { step, command: WRITE.name, args: WRITE.args, reason: 'write_to_file needs your approval' },
      new AbortController().signal,
    );
    await settle();
    // Wrapped: an async function's promise would wait for the answer itself.
    return { answer };
  };
  return { ...ui, bus, emit, store, ask, onCtrlC };
}

/** The last two lines: the status bar. */
function statusBar(frame: string): string {
  return frame.split('\n').slice(-2).join('\n');
}

describe('the goal view', () => {
  it('shows the header: agent, role, numbered goals, workspace', () => {
    const ui = mountGoal();
    const frame = ui.frame();
    expect(frame).toContain('Scribe · an AI that writes notes');
    expect(frame).toContain('  1. Write notes.txt\n  2. Say when it is done');
    expect(frame).toContain('Workspace: /tmp/ws');
  });

  it('shows a step’s thoughts, plan lines and its command with shortened arguments', async () => {
    const ui = mountGoal();
    const long = 'word '.repeat(100);
    await ui.emit(
      { type: 'goal.step', step: 1 },
      { type: 'goal.thoughts', step: 1, thoughts: THOUGHTS },
      { type: 'goal.command', step: 1, name: 'write_to_file', args: { text: long } },
    );
    const frame = ui.frame();
    expect(frame).toContain('── step 1 ─');
    expect(frame).toContain('“Writing the notes now.”');
    expect(frame).toContain('thought: I should write the notes first.');
    expect(frame).toContain('reasoning: The goal asks for a notes file.');
    expect(frame).toContain('plan:\n    - write notes.txt\n    - check it\n    - finish');
    expect(frame).toContain('criticism: I could be faster.');
    expect(frame).toContain('▶ write_to_file text="word word');
    expect(frame).toContain('… (499 chars)"');
    expect(frame).toContain('… step 1: write_to_file chosen');
  });

  it('folds a result to its first three lines and marks a failure', async () => {
    const ui = mountGoal();
    const output = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n');
    await ui.emit(...approvedStep(1, output));
    await ui.emit(
      { type: 'goal.step', step: 2 },
      { type: 'goal.command', step: 2, name: 'read_file', args: { file: 'missing.txt' } },
      { type: 'goal.authorized', step: 2, name: 'read_file', by: 'no-effect' },
      {
        type: 'goal.result',
        step: 2,
        name: 'read_file',
        ok: false,
        output: 'Error: no such file',
        files: [],
      },
    );
    const frame = ui.frame();
    expect(frame).toContain(
      '✓ write_to_file ran (approved by you)\n    line 1\n    line 2\n    line 3\n    … 7 more lines',
    );
    expect(frame).not.toContain('line 4');
    expect(frame).toContain('✗ read_file failed (no approval needed)\n    Error: no such file');
  });

  it('marks unusable answers, refusals and warnings', async () => {
    const ui = mountGoal();
    await ui.emit(
      { type: 'goal.step', step: 1 },
      { type: 'goal.unusable', step: 1, problem: 'Your answer holds no JSON object.', streak: 1 },
      { type: 'goal.warning', step: 1, kind: 'loop', message: 'You ran the same command twice.' },
      { type: 'goal.step', step: 2 },
      { type: 'goal.command', step: 2, ...WRITE },
      { type: 'goal.refused', step: 2, name: WRITE.name },
    );
    const frame = ui.frame();
    expect(frame).toContain('✗ unusable answer (1 in a row): Your answer holds no JSON object.');
    expect(frame).toContain('⚠ loop warning (step 1): You ran the same command twice.');
    expect(frame).toContain('✗ write_to_file not run');
  });

  it('lists the workspace files touched so far with their last change', async () => {
    const ui = mountGoal();
    await ui.emit(...approvedStep(1), {
      type: 'goal.result',
      step: 2,
      name: 'read_file',
      ok: true,
      output: 'x',
      files: [{ path: 'data/input.csv', change: 'read' }],
    });
    expect(ui.frame()).toContain('Workspace files (2)\n  write  notes.txt\n  read   data/input.csv');
  });

  it('shows step, tokens, cost, time against their limits, the model and the run file', async () => {
    let clock = 1_000;
    const ui = mountGoal({ model: 'gpt-4o-mini', scripted: false, now: () => clock });
    await ui.emit({
      type: 'goal.spend',
      steps: 2,
      tokens: 1234,
      costUsd: 0.0123,
      elapsedMs: 3000,
      maxSteps: 50,
      maxTokens: 20_000,
      maxCostUsd: 1,
      maxTimeMs: 600_000,
    });
    expect(statusBar(ui.frame())).toBe(
      'step 2/50 · tokens 1,234/20.0k · cost $0.0123/$1.00 · time 3s/10m 00s · gpt-4o-mini\n' +
        'run file: ws/.meta-agent/runs/scribe-1.run.json',
    );
    // The clock moves between events.
    clock += 65_000;
    await ui.emit({ type: 'goal.step', step: 3 });
    expect(statusBar(ui.frame())).toContain('time 1m 05s/10m 00s');
  });

  it('says the answers are scripted, and the cost is local', () => {
    const ui = mountGoal();
    expect(statusBar(ui.frame())).toContain(
      'step 0/50 · tokens 0 · cost local · time 0s · scripted-model [scripted]',
    );
  });

  it('shows the command waiting for approval in a box with its arguments and reason', async () => {
    const ui = mountGoal();
    await ui.ask();
    const frame = ui.frame();
    expect(frame).toContain('Step 1: run write_to_file?');
    expect(frame).toContain('write_to_file needs your approval');
    expect(frame).toContain('file: notes.txt');
    expect(frame).toMatch(/│ text: +│\n│ {3}hello +│\n│ {3}world +│/);
    expect(frame).toContain('y run · n stop the run · y -N run the next N without asking');
    expect(frame).toMatch(/› █/);
  });

  const answers: Array<[string, Approval]> = [
    ['y', { kind: 'yes' }],
    ['y -3', { kind: 'yes-for', steps: 3 }],
    ['n', { kind: 'no' }],
    ['a', { kind: 'always' }],
    ['write to a.txt instead', { kind: 'feedback', text: 'write to a.txt instead' }],
  ];
  it.each(answers)('answers %j + Enter as %j', async (typed, approval) => {
    const ui = mountGoal();
    const { answer } = await ui.ask();
    for (const char of typed) await ui.press(char);
    expect(ui.frame()).toContain(`› ${typed}█`);
    await ui.press(KEY.enter);
    await expect(answer).resolves.toEqual(approval);
    expect(ui.frame()).not.toContain('Step 1: run write_to_file?');
  });

  it('does nothing on Enter with an empty line, and edits with Backspace', async () => {
    const ui = mountGoal();
    const answered = vi.fn();
    void (await ui.ask()).answer.then(answered);
    await ui.press(KEY.enter, ' ', KEY.enter);
    expect(answered).not.toHaveBeenCalled();
    await ui.press(KEY.backspace, 'n', 'o', 'x', KEY.backspace, KEY.enter);
    expect(answered).toHaveBeenCalledWith({ kind: 'no' });
  });

  it('ignores keys while nothing is asked, and passes Ctrl+C on without typing it', async () => {
    const ui = mountGoal();
    await ui.press('y', KEY.ctrlC);
    expect(ui.onCtrlC).toHaveBeenCalledTimes(1);
    const { answer } = await ui.ask();
    await ui.press('y', KEY.ctrlC, KEY.enter);
    expect(ui.onCtrlC).toHaveBeenCalledTimes(2);
    await expect(answer).resolves.toEqual({ kind: 'yes' });
  });

  it('withdraws the question when the run is stopped (the signal aborts)', async () => {
    const ui = mountGoal();
    const controller = new AbortController();
    const answer = ui.store.approver.ask(
      { step: 1, command: 'delete_file', args: { file: 'a' }, reason: 'delete_file deletes' },
      controller.signal,
    );
    await settle();
    expect(ui.frame()).toContain('Step 1: run delete_file?');
    controller.abort(new Error('stopped'));
    await expect(answer).rejects.toThrow('stopped');
    await settle();
    expect(ui.frame()).not.toContain('run delete_file?');
  });

  it('shows how many commands are left without asking during a y -N countdown', async () => {
    const ui = mountGoal();
    await ui.emit(
      { type: 'goal.step', step: 1 },
      { type: 'goal.command', step: 1, ...WRITE },
      { type: 'goal.authorized', step: 1, name: WRITE.name, by: 'user', continuousLeft: 2 },
    );
    expect(ui.frame()).toContain('⏵ 2 commands left without asking (Ctrl+C asks before the next)');
    expect(ui.frame()).toContain('… step 1: running write_to_file (approved by you)');
  });

  it('shows a notice, cleared once the user answers the next question', async () => {
    const ui = mountGoal();
    ui.store.notice('Ctrl+C: the next command will be asked for');
    await settle();
    expect(ui.frame()).toContain('! Ctrl+C: the next command will be asked for');
    const { answer } = await ui.ask();
    await ui.press('y', KEY.enter);
    await answer;
    expect(ui.frame()).not.toContain('! Ctrl+C');
  });

  it('shows a resumed run’s earlier steps at start', () => {
    const ui = mountGoal({
      state: run({
        used: { steps: 2, promptTokens: 10, completionTokens: 5, costUsd: 0, elapsedMs: 61_000 },
        history: [
          {
            kind: 'command',
            step: 1,
            thoughts: THOUGHTS,
            command: WRITE,
            ok: true,
            output: 'Wrote 11 bytes to notes.txt',
            files: [{ path: 'notes.txt', change: 'write' }],
          },
          {
            kind: 'refused',
            step: 2,
            thoughts: THOUGHTS,
            command: { name: 'delete_file', args: { file: 'notes.txt' } },
            message: 'The user did not run delete_file and says: keep it',
          },
        ],
      }),
    });
    const frame = ui.frame();
    expect(frame).toContain('↺ resumed run: 2 steps taken before, shown below');
    expect(frame).toContain('── step 1 ─');
    expect(frame).toContain('✓ write_to_file ran\n    Wrote 11 bytes to notes.txt');
    expect(frame).toContain('✗ delete_file not run: The user did not run delete_file and says: keep it');
    expect(frame).toContain('  write  notes.txt');
    expect(statusBar(frame)).toContain('step 2/50 · tokens 15 · cost local · time 1m 01s');
  });

  it('shows the end: reason, detail and spend, and asks nothing more', async () => {
    const ui = mountGoal();
    await ui.emit(...approvedStep(1), {
      type: 'goal.ended',
      reason: 'task_complete',
      detail: 'the notes are written',
      steps: 2,
      tokens: 1500,
      costUsd: 0,
      elapsedMs: 4000,
      maxSteps: 50,
    });
    ui.store.close();
    await settle();
    const frame = ui.frame();
    expect(frame).toContain('■ run ended: task_complete (the model says the task is complete)');
    expect(frame).toContain('  the notes are written');
    expect(frame).toContain('spent: 2/50 steps · 1,500 tokens · cost local · 4s');
    expect(frame).not.toContain('… step');
    await expect(
      ui.store.approver.ask({ step: 3, command: 'x', args: {}, reason: 'r' }, new AbortController().signal),
    ).rejects.toThrow('closed');
  });
});

describe('renderGoalUI', () => {
  it('mounts on a terminal and hands back an approver that the typed answer resolves', async () => {
    const stdout = new FakeTerminal();
    const stdin = new FakeKeyboard();
    const { bus } = eventBus();
    const ui = renderGoalUI({
      bus,
      state: run(),
      model: 'scripted-model',
      scripted: true,
      savedTo: 'run.json',
      stdout: stdout as unknown as NodeJS.WriteStream,
      stdin: stdin as unknown as NodeJS.ReadStream,
      patchConsole: false,
      theme: monoTheme,
      onCtrlC: vi.fn(),
    });
    try {
      const answer = ui.approver.ask(
        { step: 1, command: 'write_to_file', args: { file: 'a.txt' }, reason: 'needs your approval' },
        new AbortController().signal,
      );
      await vi.waitFor(() => expect(stdout.output).toContain('Step 1: run write_to_file?'));
      stdin.type('y');
      await settle();
      stdin.type('\r');
      await expect(answer).resolves.toEqual({ kind: 'yes' });
      ui.notice('a notice');
      ui.finish();
      await vi.waitFor(() => expect(stdout.output).toContain('! a notice'));
    } finally {
      ui.unmount();
    }
    await ui.waitUntilExit();
  });
});
