import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox } from '../../src/sandbox/index.js';
import { failure, where } from './helpers.js';

describe('host functions exposed to the sandbox', () => {
  let sandbox: Sandbox;
  const received: unknown[] = [];
  const stored = { nodes: [{ name: 'start' }] };
  beforeAll(async () => {
    sandbox = await Sandbox.create();
    sandbox.expose('self', {
      addNode: (fields: { name: string }) => {
        received.push(fields);
        return `added ${fields.name}`;
      },
      nodes: () => stored.nodes,
      mutate: (list: string[]) => {
        list.push('changed by the host');
        return list.length;
      },
      fail: (message: string) => {
        throw new Error(message);
      },
      failWithString: () => {
        throw 'plain string';
      },
      giveFunction: () => () => 1,
      later: async () => 1,
    });
  });
  afterAll(() => sandbox.dispose());

  it('calls a host function synchronously with a copy of the arguments', async () => {
    received.length = 0;
    const result = await sandbox.runCode('reply = self.addNode({ name: "ask", tags: ["q"] })', {}, where);
    expect(result.scope).toEqual({ reply: 'added ask' });
    expect(received).toEqual([{ name: 'ask', tags: ['q'] }]);
  });

  it('hands the code a copy of what the host function returns', async () => {
    const result = await sandbox.runCode(
      'const list = self.nodes(); list.push({ name: "x" }); list.length',
      {},
      where,
    );
    expect(result.value).toBe(2);
    expect(stored.nodes).toEqual([{ name: 'start' }]);
  });

  it('gives the host a copy: what it does to an argument does not reach the code', async () => {
    const result = await sandbox.runCode('const mine = ["a"]; n = self.mutate(mine); mine', {}, where);
    expect(result.value).toEqual(['a']);
    expect(result.scope.n).toBe(2);
  });

  it('raises what a host function throws inside, as a catchable Error with the same message', async () => {
    const code =
      'try { self.fail("no such node: b") } catch (e) { caught = [e instanceof Error, e.message] }';
    expect((await sandbox.runCode(code, {}, where)).scope).toEqual({ caught: [true, 'no such node: b'] });
    const other = 'try { self.failWithString() } catch (e) { caught = e.message }';
    expect((await sandbox.runCode(other, {}, where)).scope).toEqual({ caught: 'plain string' });
  });

  it('fails the node with the host message and the line when the code does not catch it', async () => {
    const error = await failure(sandbox.runCode('const a = 1;\nself.fail("edit refused")', {}, where));
    expect(error.kind).toBe('runtime');
    expect(error.message).toBe('node "calc": Error: edit refused (line 2)');
  });

  it('shows no host file or stack frame in an error thrown by a host function', async () => {
    const code = 'try { self.fail("x") } catch (e) { stack = e.stack }';
    const stack = (await sandbox.runCode(code, {}, where)).scope.stack as string;
    expect(stack).not.toMatch(/file:|node:|\/work\/|expose\.test/);
  });

  it('refuses to pass a function as an argument, with a catchable TypeError', async () => {
    const code =
      'try { self.addNode({ name: "f", run: () => 1 }) } catch (e) { caught = e.name + ": " + e.message }';
    expect((await sandbox.runCode(code, {}, where)).scope.caught).toBe(
      'TypeError: self.addNode: argument 1 at .run is a function, which cannot leave the sandbox',
    );
  });

  it('raises an error inside when a host function returns what cannot be copied in', async () => {
    const code = 'try { self.giveFunction() } catch (e) { caught = e.message }';
    expect((await sandbox.runCode(code, {}, where)).scope.caught).toMatch(
      /^self\.giveFunction returned a value that cannot be copied into the sandbox/,
    );
  });

  it('raises an error inside when a host function returns a Promise', async () => {
    const code = 'try { self.later() } catch (e) { caught = e.message }';
    expect((await sandbox.runCode(code, {}, where)).scope.caught).toBe(
      'self.later returned a Promise; host functions must be synchronous',
    );
  });

  it('is callable from an expression too', async () => {
    expect(await sandbox.evaluate('self.nodes().length', {}, where)).toBe(1);
  });

  it('keeps a namespace read-only and hides a scope variable of the same name, handing it back unchanged', async () => {
    const code = 'self = null; result = typeof self.addNode';
    const result = await sandbox.runCode(code, { self: 'a variable' }, where);
    expect(result.scope).toEqual({ self: 'a variable', result: 'function' });
  });

  it('reads an object variable of a namespace’s name through it, its functions first, never handing it back', async () => {
    sandbox.expose('store', { ping: () => 'pong', shadow: () => 'function' });
    const code =
      'store.user.name = "changed"; result = [store.user.name, store.ping(), typeof store.shadow, "user" in store]';
    const scope = { store: { user: { name: 'Dana' }, shadow: 'data' } };
    const result = await sandbox.runCode(code, scope, where);
    expect(result.scope).toEqual({ ...scope, result: ['changed', 'pong', 'function', true] });
    expect(await sandbox.evaluate('store.user === undefined && "user" in store === false', {}, where)).toBe(
      true,
    );
    sandbox.unexpose('store');
  });

  it('stops offering a namespace after unexpose', async () => {
    sandbox.expose('temp', { ping: () => 'pong' });
    expect(await sandbox.evaluate('temp.ping()', {}, where)).toBe('pong');
    sandbox.unexpose('temp');
    expect(await sandbox.evaluate('typeof temp', {}, where)).toBe('undefined');
  });

  it('refuses a namespace that is not an identifier, or a member that is not a function', () => {
    expect(() => sandbox.expose('my-api', {})).toThrow(/plain identifier/);
    expect(() => sandbox.expose('api', { x: 1 as never })).toThrow(/api\.x .* not a function/);
  });
});
