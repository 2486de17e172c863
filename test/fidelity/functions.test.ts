/** What a function returns, as AutoGRAMS 0.1 returns it. */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { converse, csvGraph, noModels } from '../support/agents.js';

/**
 * `recursive_fib.py` of AutoGRAMS' examples as its compiler lays it out (autograms/autogram_compiler.py:
 * 306-319 for the returns, 403-466 for the `if`), called from a conversation: `if n <= 0:
 * print("Incorrect input")` falls through to the `if`'s end, a transition node, whose bare `return`
 * returns the frame's last agent reply. The print is an expression that reads the same in JavaScript and
 * Python.
 */
const COMPILED_FIB = readFileSync(new URL('../fixtures/graphs/compiled_fib.csv', import.meta.url), 'utf8');

describe('a bare return after a transition node (autograms/nodes/transition_nodes.py:17-24, base_node.py:838-867, memory.py:95-104)', () => {
  let fib: Interpreter;
  beforeAll(async () => {
    fib = await Interpreter.create({ graph: csvGraph(COMPILED_FIB), models: noModels });
  });
  afterAll(() => fib.dispose());

  it('returns "" from the compiled recursive_fib for n <= 0, as AutoGRAMS\' apply_fn does, and the numbers otherwise', async () => {
    const values = [];
    for (const n of [0, -3, 1, 2, 7]) values.push((await fib.applyFn('fibonacci', [n])).value);
    expect(values).toEqual(['', '', 0, 1, 8]);
    // In a conversation too: the test in reference.test.ts runs this one through AutoGRAMS itself.
    const { said } = await converse(csvGraph(COMPILED_FIB), { rules: [] }, [undefined, 'Ada']);
    expect(said).toEqual(['What is your name?', '[] [] [8] [What is your name?]']);
  });

  it("returns the frame's last agent reply: a chat or thought node's text, '' after code or a call, null when nothing else ran in the frame", async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions
begin,function,said = ask(),think
think,local_function,thought = ponder(),compute
compute,local_function,computed = work(),empty
empty,local_function,nothing = idle(),tell
tell,chat_exact,[$said] [$thought] [$computed] [$nothing],tell
ask(),chat_exact,What is your name?,ask_end
ask_end,transition,,return
ponder(),thought_qa,What is 6 times 7?,ponder_end
ponder_end,transition,,return
work(),python_function,6 * 7,work_call
work_call,local_function,inner = ponder(),work_end
work_end,transition,,return
idle(),transition,,return
`);
    const { said } = await converse(graph, { rules: [{ role: 'chatbot', reply: '42' }] }, [undefined, 'Ada']);
    // thought_qa's variable holds the question too, but its turn's reply is the answer alone
    // (autograms/nodes/thought_nodes.py:35, 64-72); a call is a turn with an empty reply in the caller's
    // frame, on the call and on the return (function_nodes.py:82-108). A spreadsheet shows None as
    // Python's str() does; AutoGRAMS refuses to embed it (autogram_utils.py:565), see the README.
    expect(said).toEqual(['What is your name?', '[What is your name?] [42] [] [None]']);
  });
});
