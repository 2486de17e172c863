import { describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { setVariable } from '../../src/engine/frames.js';
import { newState } from '../../src/engine/state.js';
import { embedInCode, valueTextFor } from '../../src/engine/template.js';
import { resolveTarget } from '../../src/engine/transitions.js';
import type { CodeLanguage } from '../../src/graph/language.js';
import { csvGraph, graphOf, promptsOf, recordingModels } from '../support/agents.js';

const ARGS = [[-2, 8, 14.5, 19], true, { k: 1, b: [null, "it's"] }, 'plain text'];

/**
 * `show` says its arguments back (thought_exact: its text is its output, which `return` returns) and
 * asks the classifier, in its transition question and choices, where to go next.
 */
const NODES = [
  {
    name: 'show(xs, flag, info, text)',
    action: 'thought_exact' as const,
    instruction: 'list $xs, flag $flag, info $info, text $text',
    transitions: ['return', 'other'],
    transitionQuestion: 'Is $xs sorted?',
    transitionChoices: ['flag is $flag', 'info is $info'],
  },
  { name: 'other', action: 'thought_exact' as const, instruction: 'other', transitions: ['return'] },
];

/** Runs `show(...ARGS)` in a graph of `language`: what it returned, and what the classifier was asked. */
async function run(language: CodeLanguage | undefined) {
  const { models, calls } = recordingModels({ rules: [{ role: 'classifier', reply: 'A' }] });
  const agent = await Interpreter.create({ graph: graphOf(NODES, language ? { language } : {}), models });
  try {
    const { value } = await agent.applyFn('show', ARGS);
    return { shown: value, asked: promptsOf(calls, 'classifier') };
  } finally {
    agent.dispose();
  }
}

describe('$var in a Python graph: Python’s str() of the value', () => {
  it('embeds str() in instructions, transition questions and choices of a Python graph', async () => {
    const { shown, asked } = await run('python');
    expect(shown).toBe(
      "list [-2, 8, 14.5, 19], flag True, info {'k': 1, 'b': [None, \"it's\"]}, text plain text",
    );
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('Is [-2, 8, 14.5, 19] sorted?');
    expect(asked[0]).toContain('flag is True');
    expect(asked[0]).toContain(`info is {'k': 1, 'b': [None, "it's"]}`);
  });

  it('keeps a JavaScript graph’s text as it was', async () => {
    for (const language of [undefined, 'javascript'] as const) {
      const { shown, asked } = await run(language);
      expect(shown).toBe('list [-2,8,14.5,19], flag true, info {"k":1,"b":[null,"it\'s"]}, text plain text');
      expect(asked[0]).toContain('Is [-2,8,14.5,19] sorted?');
      expect(asked[0]).toContain('flag is true');
    }
  });

  it('reads an AutoGRAMS spreadsheet as a Python graph', async () => {
    const graph = csvGraph('Name,Action,Instruction,Transitions\nshow(xs),thought_exact,got $xs,return\n');
    const { models } = recordingModels({ rules: [] });
    const agent = await Interpreter.create({ graph, models });
    try {
      expect((await agent.applyFn('show', [[1, 'a', false]])).value).toBe("got [1, 'a', False]");
    } finally {
      agent.dispose();
    }
  });

  it('pastes code and call arguments in the language of the node, which may differ from the graph’s', () => {
    const variables = { user_list: [3, 1.5, 'x'], done: false };
    const python = valueTextFor({ language: 'python' });
    expect(embedInCode('merge_sort($user_list) if not $done else None', variables, python)).toBe(
      "merge_sort([3, 1.5, 'x']) if not False else None",
    );
    const javascriptNode = valueTextFor({ language: 'python' }, { language: 'javascript' });
    expect(embedInCode('mergeSort($user_list, $done)', variables, javascriptNode)).toBe(
      'mergeSort([3,1.5,"x"], false)',
    );
    const pythonNode = valueTextFor({}, { language: 'python' });
    expect(embedInCode('f($done)', variables, pythonNode)).toBe('f(False)');
  });

  it('embeds a `return $var` as code of the node’s language', () => {
    const graph = graphOf(
      [
        { name: 'py', action: 'chat', transitions: ['return $xs'] },
        { name: 'js', action: 'chat', transitions: ['return $xs'], language: 'javascript' },
      ],
      { language: 'python' },
    );
    const state = newState(graph);
    setVariable(state, 'xs', [1, true, null]);
    expect(resolveTarget(graph, state, graph.get('py')!, 'return $xs')).toEqual({
      kind: 'return',
      expression: '[1, True, None]',
    });
    expect(resolveTarget(graph, state, graph.get('js')!, 'return $xs')).toEqual({
      kind: 'return',
      expression: '[1,true,null]',
    });
  });
});
