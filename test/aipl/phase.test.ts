/**
 * The model-update phase: what it asks, how many calls it makes and how many are in flight at once,
 * votes, coercions, the turn's cache, and what it stores.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { parseTemplate } from '../../src/aipl/parse.js';
import { AiplCache, DEFAULT_AIPL_SETTINGS, renderWithModel } from '../../src/aipl/phase.js';
import type { AiplState } from '../../src/aipl/state.js';
import { Script, ScriptedModel, type ScriptFile } from '../../src/llm/scripted.js';
import { TEXT_ONLY, type CompletionRequest, type LanguageModel } from '../../src/llm/types.js';
import { asked, renderAipl, TEST_CLOCK } from '../support/aipl.js';

const said = [
  { role: 'user' as const, content: 'I am Dana, from Lyon. I need a quote for solar panels by Friday.' },
];

const questions: ScriptFile = {
  rules: [
    { match: 'What is their name?', reply: 'Dana' },
    { match: 'Where do they live?', reply: 'Lyon' },
    { match: 'What do they need?', reply: 'a quote for solar panels' },
    { match: 'By when?', reply: 'Friday' },
    { match: 'What is their budget?', reply: 'unknown' },
  ],
};

const FOUR_QUESTIONS = [
  '(= "What is their name?" -> p.name)',
  '(= "Where do they live?" -> p.city)',
  '(= "What do they need?" -> p.needs)',
  '(= "By when?" -> p.deadline)',
  '{p.name} from {p.city} needs {p.needs} by {p.deadline}.',
].join('\n');

describe('asking', () => {
  it('asks independent questions at once, up to the concurrency', async () => {
    for (const [concurrency, expected] of [
      [8, 4],
      [2, 2],
      [1, 1],
    ] as const) {
      const model = new SlowModel(questions);
      const result = await renderWithModel({
        template: parseTemplate(FOUR_QUESTIONS),
        state: { turn: 1, log: [] },
        vars: {},
        names: { char: 'Ava', user: 'Dana', assistant: 'Ava' },
        clock: TEST_CLOCK,
        conversation: said,
        models: { chatbot: model, classifier: model },
        settings: { ...DEFAULT_AIPL_SETTINGS, concurrency },
        cache: new AiplCache(),
        label: 'test',
      });
      expect(result.text).toBe('Dana from Lyon needs a quote for solar panels by Friday.');
      expect(result.calls).toBe(4);
      expect(model.mostInFlight).toBe(expected);
    }
  });

  it('asks what a block’s condition reveals in a second wave, and decides the text on what was stored', async () => {
    const source =
      '((needsQuote({p.needs})\n(= "By when?" -> p.deadline)\nQuote by {p.deadline}.\n)\n(= "What do they need?" -> p.needs)';
    const script: ScriptFile = {
      rules: [
        { role: 'classifier', match: 'needsQuote("a quote for solar panels")', reply: 'B' },
        { role: 'classifier', match: 'needsQuote("a quote")', reply: 'A' },
        ...questions.rules,
      ],
    };
    const out = await renderAipl(source, { values: { 'p.needs': 'a quote' }, script, conversation: said });
    expect(
      asked(out.calls).map((text) => text.split('\n')[0]!.replace(/^.*(?=needsQuote)|^.*above: /, '')),
    ).toEqual([
      'needsQuote("a quote")',
      'What do they need?',
      'By when?',
      'needsQuote("a quote for solar panels")',
    ]);
    expect(out.stored.map((entry) => entry.name)).toEqual(['p.deadline', 'p.needs']);
    expect(out.text).toBe('');
  });

  it('reads text that plainly is a number or a yes/no without a model, and asks for the rest', async () => {
    const source = '((a.n > 2 && a.yes && !a.no && a.words >= 3)\nall\n)';
    const script: ScriptFile = {
      rules: [{ match: 'What number does this text state? "three or four"', reply: 'about 3' }],
    };
    const out = await renderAipl(source, {
      values: { 'a.n': ' 2.5 ', 'a.yes': 'Yes', 'a.no': 'no', 'a.words': 'three or four' },
      script,
    });
    expect(out.text).toBe('all\n');
    expect(out.calls).toHaveLength(1);
  });

  it('reads an unset name as empty: no number, false, and equal to ""', async () => {
    const out = await renderAipl('((a.n > 0)\nmore\n)((a.t)\ntrue\n)((a.t == "")\nempty\n)');
    expect(out.text).toBe('empty\n');
    expect(out.calls).toHaveLength(0);
  });

  it('compares text ignoring case and surrounding blanks, and numbers as numbers', async () => {
    const out = await renderAipl('((a.mood == "HAPPY" && a.count == 3 && vars.n != 4)\nyes\n)', {
      values: { 'a.mood': ' happy', 'a.count': '3.0' },
      vars: { n: 5 },
    });
    expect(out.text).toBe('yes\n');
  });

  it('asks a soft function for a value in the kind its comparison needs', async () => {
    const script: ScriptFile = {
      rules: [
        { role: 'chatbot', match: 'mood("I lost my keys")\nAnswer with its value alone.', reply: '"Upset"' },
        {
          role: 'chatbot',
          match: 'stars("great service")\nAnswer with a number alone, in digits.',
          reply: '4 stars',
        },
      ],
    };
    const out = await renderAipl(
      '((mood("I lost my keys") == "upset" && stars("great service") >= 4)\nboth\n)',
      { script },
    );
    expect(out.text).toBe('both\n');
  });

  it('shows the model the definition a graph gives a soft function', async () => {
    const script: ScriptFile = { rules: [{ role: 'classifier', reply: 'A' }] };
    const out = await renderAipl('((isLate("21:40")\nlate\n)', {
      script,
      settings: { functions: { isLate: 'true when the time is after 21:00' } },
    });
    expect(asked(out.calls)[0]).toMatch(
      /^isLate: true when the time is after 21:00\nHow would the following function evaluate/,
    );
  });
});

describe('votes', () => {
  const flipping = (answers: string[]): ScriptFile => ({ rules: [{ role: 'classifier', reply: answers }] });

  it('take the majority of n calls, sampled above temperature 0', async () => {
    const out = await renderAipl('((isHappy("ok")\nhappy\n)', {
      script: flipping(['A', 'B', 'A']),
      settings: { votes: 3 },
    });
    expect(out.text).toBe('happy\n');
    expect(out.calls).toHaveLength(3);
    expect(out.calls.map((call) => call.request.temperature)).toEqual([0.7, 0.7, 0.7]);
    const no = await renderAipl('((isHappy("ok")\nhappy\n)', {
      script: flipping(['B', 'A', 'B', 'A', 'B']),
      settings: { votes: 5 },
    });
    expect(no.text).toBe('');
  });

  it('are one call at temperature 0 by default', async () => {
    const out = await renderAipl('((isHappy("ok")\nhappy\n)', { script: flipping(['A']) });
    expect(out.calls.map((call) => call.request.temperature)).toEqual([0]);
  });

  it('count each retry of an unusable answer as a call', async () => {
    const out = await renderAipl('((isHappy("ok")\nhappy\n)', { script: flipping(['maybe', 'A']) });
    expect(out.text).toBe('happy\n');
    expect(out.calls).toHaveLength(2);
  });
});

describe('the turn’s cache', () => {
  it('answers a second render in the same turn without a call, and the next turn asks afresh', async () => {
    const cache = new AiplCache();
    const state: AiplState = { turn: 1, log: [] };
    const first = await renderAipl(FOUR_QUESTIONS, { script: questions, conversation: said, cache, state });
    expect([first.calls.length, first.cached]).toEqual([4, 0]);
    const again = await renderAipl(FOUR_QUESTIONS, { script: questions, conversation: said, cache, state });
    expect([again.calls.length, again.cached]).toEqual([0, 4]);
    expect(again.stored).toEqual([]);
    state.turn = 2;
    const next = await renderAipl(FOUR_QUESTIONS, { script: questions, conversation: said, cache, state });
    expect(next.calls).toHaveLength(4);
  });

  it('reports each render’s calls, cache hits, time and what it stored as an event', async () => {
    const out = await renderAipl(FOUR_QUESTIONS, { script: questions, conversation: said });
    expect(out.events).toEqual([
      expect.objectContaining({
        type: 'aipl.phase',
        turn: 1,
        calls: 4,
        cached: 0,
        stored: [
          { name: 'p.name', value: 'Dana' },
          { name: 'p.city', value: 'Lyon' },
          { name: 'p.needs', value: 'a quote for solar panels' },
          { name: 'p.deadline', value: 'Friday' },
        ],
      }),
    ]);
  });
});

describe('storing', () => {
  it('appends answers to the log, skipping "unknown" and a value that is already the last', async () => {
    const state: AiplState = {
      turn: 4,
      log: [
        { name: 'p.name', value: 'Dana', turn: 1, question: 'What is their name?' },
        { name: 'p.budget', value: '5000 euros', turn: 2, question: 'What is their budget?' },
      ],
    };
    const source =
      '(= "What is their name?" -> p.name)\n(= "What is their budget?" -> p.budget)\n(= "Where do they live?" -> p.city)\n{p.budget}';
    const out = await renderAipl(source, { script: questions, conversation: said, state });
    expect(out.text).toBe('5000 euros');
    expect(state.log.slice(2)).toEqual([
      { name: 'p.city', value: 'Lyon', turn: 4, question: 'Where do they live?' },
    ]);
  });

  it('stores answers in the turn they are asked, for the template to show at once', async () => {
    const out = await renderAipl('(= "Where do they live?" -> p.city)\nLives in {p.city:?}.', {
      script: questions,
      conversation: said,
    });
    expect(out.text).toBe('Lives in Lyon.');
  });
});

/** A scripted model that takes a little while to answer, and counts the calls in flight at once. */
class SlowModel implements LanguageModel {
  readonly id = 'slow';
  readonly modelName = 'scripted';
  readonly capabilities = TEXT_ONLY;
  readonly answersFrom = 'rules';
  readonly #inner: ScriptedModel;
  #inFlight = 0;
  mostInFlight = 0;

  constructor(script: ScriptFile) {
    this.#inner = new ScriptedModel(new Script(script, 'slow'), 'chatbot');
  }

  async complete(request: CompletionRequest) {
    this.mostInFlight = Math.max(this.mostInFlight, ++this.#inFlight);
    await sleep(15);
    this.#inFlight -= 1;
    return this.#inner.complete(request);
  }

  stream(request: CompletionRequest) {
    return this.complete(request);
  }

  embed(texts: string[]) {
    return this.#inner.embed(texts);
  }
}
