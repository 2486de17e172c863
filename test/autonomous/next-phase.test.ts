import { describe, expect, it } from 'vitest';
import { nextPhase, type LoopView } from '../../src/autonomous/next-phase.js';
import { newRunState, type PendingCommand, type RunState } from '../../src/autonomous/run-state.js';
import { commandRegistry } from '../../tools/index.js';

const registry = commandRegistry();
const thoughts = { text: 't', reasoning: 'r', plan: 'p', criticism: 'c', speak: 's' };

function run(pending?: Partial<PendingCommand>, more: Partial<RunState> = {}): RunState {
  const state = newRunState({ name: 'T', role: 'tester', goals: ['test'], workspace: '/ws', budget: {} });
  const command = { name: 'write_to_file', args: { file: 'a.txt', text: 'x' } };
  return {
    ...state,
    ...more,
    ...(pending && { pending: { step: 1, thoughts, command, phase: 'answered', ...pending } }),
  };
}

/** A process that asked the model for step 1 itself, with someone to ask. */
function view(more: Partial<LoopView> = {}): LoopView {
  return {
    stopped: false,
    registry,
    permissions: { yes: false, allow: new Set(), canAsk: true },
    askNext: false,
    shownStep: 1,
    carrying: undefined,
    countdownRan: 0,
    ...more,
  };
}

describe('what the goal loop does next', () => {
  it('asks the model for a step when no command is pending', () => {
    expect(nextPhase(run(), view())).toEqual({ kind: 'step' });
  });

  it('ends the run when the user stopped it between commands', () => {
    const end = { kind: 'end', reason: 'user', detail: 'the user stopped the run (Ctrl+C)' };
    expect(nextPhase(run(), view({ stopped: true }))).toEqual(end);
    expect(nextPhase(run({ phase: 'answered' }), view({ stopped: true }))).toEqual(end);
  });

  it('takes a command it has checked or authorized on to its end before it notices a stop', () => {
    const phase = nextPhase(run({ phase: 'approved' }), view({ stopped: true, carrying: 1 }));
    expect(phase).toMatchObject({ kind: 'execute', command: { name: 'write_to_file' } });
  });

  it('drops a pending command the run does not offer any more', () => {
    const state = run({ command: { name: 'browse_website', args: { url: 'https://a.example' } } });
    const phase = nextPhase(state, view({ registry: { get: () => undefined } }));
    expect(phase).toEqual({
      kind: 'drop',
      message:
        'browse_website is not available in this run any more (it was resumed without what it needs). Choose another command.',
    });
  });

  it('shows a pending command from a run file, with its arguments checked, before anything else', () => {
    const phase = nextPhase(run({ phase: 'approved' }), view({ shownStep: undefined }));
    expect(phase).toEqual({ kind: 'show', args: { file: 'a.txt', text: 'x' } });
  });

  it('drops a pending command from a run file whose arguments do not check', () => {
    const state = run({ command: { name: 'write_to_file', args: { file: 7 } } });
    const phase = nextPhase(state, view({ shownStep: undefined }));
    expect(phase).toMatchObject({
      kind: 'drop',
      message: expect.stringMatching(/^write_to_file was not run: /),
    });
  });

  it('asks the user about an answered command that needs approval', () => {
    expect(nextPhase(run({ phase: 'answered' }), view())).toMatchObject({
      kind: 'ask',
      command: { name: 'write_to_file' },
      reason: 'write_to_file needs your approval',
    });
  });

  it('refuses with nobody to ask, and says when the refusal is the second in a row and ends the run', () => {
    const permissions = { yes: false, allow: new Set<string>(), canAsk: false };
    const first = nextPhase(run({ phase: 'answered' }), view({ permissions }));
    expect(first).toMatchObject({ kind: 'refuse', ends: false });
    const second = nextPhase(run({ phase: 'answered' }, { refusedStreak: 1 }), view({ permissions }));
    expect(second).toMatchObject({ kind: 'refuse', ends: true });
  });

  it('authorizes without asking what --yes, the countdown or having no effect lets run', () => {
    const yes = { yes: true, allow: new Set<string>(), canAsk: true };
    expect(nextPhase(run({}), view({ permissions: yes }))).toMatchObject({ kind: 'authorize', by: 'yes' });
    expect(nextPhase(run({}, { continuousLeft: 2 }), view())).toMatchObject({
      kind: 'authorize',
      by: 'continuous',
    });
    const nothing = run({ command: { name: 'do_nothing', args: {} } });
    expect(nextPhase(nothing, view())).toMatchObject({ kind: 'authorize', by: 'no-effect' });
  });

  it('ends the run, asking the model nothing more, once the countdown is spent and nobody can be asked', () => {
    const nobody = { yes: false, allow: new Set<string>(), canAsk: false };
    expect(nextPhase(run(), view({ permissions: nobody, countdownRan: 2 }))).toEqual({
      kind: 'end',
      reason: 'continuous_limit',
      detail: 'the 2 commands --continuous allowed have run, and there is no terminal to ask for more',
    });
    // Someone to ask, commands left, or no countdown at all: the model is asked for the next step.
    expect(nextPhase(run(), view({ countdownRan: 2 }))).toEqual({ kind: 'step' });
    expect(
      nextPhase(run(undefined, { continuousLeft: 1 }), view({ permissions: nobody, countdownRan: 1 })),
    ).toEqual({
      kind: 'step',
    });
    expect(nextPhase(run(), view({ permissions: nobody }))).toEqual({ kind: 'step' });
  });

  it('after Ctrl+C asks about the next command with an effect, whatever let it run', () => {
    const yes = { yes: true, allow: new Set<string>(), canAsk: true };
    expect(nextPhase(run({}), view({ permissions: yes, askNext: true }))).toMatchObject({
      kind: 'ask',
      reason: 'you pressed Ctrl+C',
    });
    const nothing = run({ command: { name: 'do_nothing', args: {} } });
    expect(nextPhase(nothing, view({ askNext: true }))).toMatchObject({ kind: 'authorize' });
    const nobody = { yes: true, allow: new Set<string>(), canAsk: false };
    expect(nextPhase(run({}), view({ permissions: nobody, askNext: true }))).toMatchObject({
      kind: 'authorize',
      by: 'yes',
    });
  });

  it('runs an approved command', () => {
    expect(nextPhase(run({ phase: 'approved' }), view())).toMatchObject({ kind: 'execute' });
  });

  it('never runs again a command with a side effect that was running, and runs again one without', () => {
    expect(nextPhase(run({ phase: 'running' }), view())).toMatchObject({
      kind: 'interrupted',
      command: { name: 'write_to_file' },
    });
    const read = run({ phase: 'running', command: { name: 'read_file', args: { file: 'a.txt' } } });
    expect(nextPhase(read, view())).toMatchObject({ kind: 'execute', command: { name: 'read_file' } });
  });
});
