/**
 * The page at `/` as a user sees it: Debian's Chromium, driven by Playwright, on the built CLI's
 * `meta-agent serve` with scripted agents. It chats, watches the drawing's marks follow the
 * conversation, sees a self-editing agent's new node drawn, inspects nodes, and asks for a key when
 * the server has keys. Screenshots go to test-artifacts/serve-page-*.png.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipNote, hasChromium, launchChromium } from '../support/chromium.js';
import { startServe, type ServeProcess } from '../support/serve.js';

const FIXTURES = 'test/fixtures/serve';
const SCRIPTED = ['--provider', 'scripted', '--script', `${FIXTURES}/page.script.json`];
const AGENTS = [`${FIXTURES}/guide.autogram.json`, `${FIXTURES}/gardener.autogram.json`];
const KEY = 'page-test-key';

/** Polls until `read` passes: a turn takes the scripted model's time, and more on a busy machine. */
function until<T>(read: () => T | Promise<T>) {
  return expect.poll(read, { timeout: 15_000 });
}

describe.skipIf(!hasChromium)(`the page at / in headless Chromium${chromiumSkipNote}`, () => {
  let browser: Browser;
  let data: string;
  let serve: ServeProcess;

  beforeAll(async () => {
    data = await mkdtemp(join(tmpdir(), 'meta-agent-page-'));
    await mkdir('test-artifacts', { recursive: true });
    [serve, browser] = await Promise.all([
      startServe([...AGENTS, 'examples/plan-task.flow.json', ...SCRIPTED, '--port', '0', '--data', data]),
      launchChromium(),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await serve?.stop();
    if (data) await rm(data, { recursive: true, force: true });
  });

  /**
   * Opens the page at 1280x800; `problems` collects script errors, refusals by its Content-Security-Policy
   * and any request that leaves the server.
   */
  async function open(url: string, hash = ''): Promise<{ page: Page; problems: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`script error: ${error.message}`));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
    });
    page.on('request', (request) => {
      if (!request.url().startsWith(`${url}/`)) problems.push(`request elsewhere: ${request.url()}`);
    });
    await page.goto(`${url}/${hash}`);
    return { page, problems };
  }

  const currentNode = (page: Page) => page.locator('#graph g.node.current').getAttribute('aria-label');
  const nodeNamed = (page: Page, name: string) => page.locator(`#graph g.node[aria-label="${name}"]`);

  async function send(page: Page, text: string, replies: number): Promise<void> {
    await page.locator('#message').fill(text);
    await page.locator('#message').press('Enter');
    await until(() => page.locator('#messages .message.assistant').count()).toBe(replies);
    await until(() => page.locator('#messages .streaming').count()).toBe(0);
  }

  it('chats two turns with a scripted agent while the current node moves along the drawing', async () => {
    const { page, problems } = await open(serve.url);
    await until(() => page.locator('#graph-picker option').allTextContents()).toEqual([
      'guide',
      'gardener (edits itself)',
      'plan-task (flow)',
    ]);
    await until(() => page.locator('#graph g.node').count()).toBe(3);
    expect(await page.locator('#graph g.node.current').count()).toBe(0);

    await page.locator('#new-conversation').click();
    await until(() => page.locator('#messages .message.assistant .text').allTextContents()).toEqual([
      'Welcome! What is your name?',
    ]);
    await until(() => currentNode(page)).toBe('welcome');

    await send(page, 'Ann', 2);
    await until(() => currentNode(page)).toBe('ask_topic');
    await send(page, 'tides', 3);
    await until(() => currentNode(page)).toBe('explain');

    expect(await page.locator('#messages .message .text').allTextContents()).toEqual([
      'Welcome! What is your name?',
      'Ann',
      'Nice to meet you, Ann. Which topic would you like to learn about?',
      'tides',
      "Tides rise and fall because the Moon's gravity pulls on the oceans.",
    ]);
    expect((await namesOf(page.locator('#graph g.node.visited'))).sort()).toEqual([
      'ask_topic',
      'explain',
      'welcome',
    ]);
    await until(() => page.locator('#at-node').textContent()).toBe('At explain');

    // The inspector shows a node's fields as the exported page does, and follows its links.
    await nodeNamed(page, 'welcome').click();
    await until(() => page.locator('#details h2').textContent()).toBe('welcome');
    const details = await page.locator('#details').innerText();
    expect(details).toContain('Welcome the user and ask for their name.');
    expect(details).toMatch(/TRANSITIONS\s+To\s+ask_topic/);
    await page.locator('#details button.link', { hasText: 'ask_topic' }).click();
    await until(() => page.locator('#details h2').textContent()).toBe('ask_topic');
    await nodeNamed(page, 'welcome').click();
    await page.screenshot({ path: 'test-artifacts/serve-page-chat.png' });

    // The address keeps the conversation: a reload comes back to it, marks and all.
    const again = await open(serve.url, new URL(page.url()).hash);
    await until(() => again.page.locator('#messages .message .text').count()).toBe(5);
    await until(() => currentNode(again.page)).toBe('explain');
    expect(problems).toEqual([]);
    expect(again.problems).toEqual([]);
    await Promise.all([page.close(), again.page.close()]);
  });

  it('draws the node a self-editing agent adds, marked as added, and shows the version that added it', async () => {
    const { page, problems } = await open(serve.url);
    await until(() => page.locator('#graph g.node').count()).toBe(3);
    await page.locator('#graph-picker').selectOption('gardener');
    await until(() => page.locator('#graph svg title').first().textContent()).toBe('gardener');
    expect((await namesOf(page.locator('#graph g.node'))).sort()).toEqual(['greet', 'plant', 'tend']);

    // The first message starts the conversation (the agent greets first), then goes to it.
    await page.locator('#message').fill('tomatoes');
    await page.locator('#message').press('Enter');
    await until(() => page.locator('#messages .message .text').allTextContents()).toEqual([
      'Hello, gardener! What shall we plant today?',
      'tomatoes',
      'Your seedling has sprouted: I grew a new node for it.',
    ]);
    await until(async () => (await namesOf(page.locator('#graph g.node'))).sort()).toEqual([
      'greet',
      'plant',
      'seedling',
      'tend',
    ]);
    await until(() => namesOf(page.locator('#graph g.node.added'))).toEqual(['seedling']);
    await until(() => currentNode(page)).toBe('seedling');
    await until(() => page.locator('#version-line').textContent()).toBe('version 2');

    await page.locator('#tab-versions').click();
    await until(() => page.locator('#tab-versions').textContent()).toBe('Versions (2)');
    await until(() => rowsOf(page.locator('table.versions tr[data-version]'))).toEqual([
      ['2', 'plant', 'update', 'plant', '4'],
      ['1', 'plant', 'add', 'seedling', '4'],
      ['0', '', 'loaded', '', '3'],
    ]);
    await until(() => page.locator('#diff h3').textContent()).toBe('Version 2: update by plant');
    expect(await page.locator('#diff').innerText()).toMatch(
      /changed\s+plant\s+TRANSITIONS\s+\[\s+"tend"\s+\]\s+\[\s+"seedling"\s+\]/,
    );
    await page.locator('table.versions tr[data-version="1"]').click();
    await until(() => page.locator('#diff h3').textContent()).toBe('Version 1: add by plant');
    expect(await page.locator('#diff').innerText()).toContain('Tell the user their seedling has sprouted.');
    await page.screenshot({ path: 'test-artifacts/serve-page-versions.png' });

    await nodeNamed(page, 'seedling').click();
    await until(() => page.locator('#details h2').textContent()).toBe('seedling');
    expect(await page.locator('#details').innerText()).toContain(
      'Tell the user their seedling has sprouted.',
    );
    await page.screenshot({ path: 'test-artifacts/serve-page-self-edit.png' });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('draws a flow to inspect, with no chat, and says the server runs no goals where it has no /v1/runs', async () => {
    const { page, problems } = await open(serve.url, '#plan-task');
    await until(() => page.locator('#graph g.node').count()).toBe(7);
    expect(await page.locator('#send').isDisabled()).toBe(true);
    expect(await page.locator('#conversation-line').textContent()).toContain('plan-task is a flow');
    await nodeNamed(page, 'plan').click();
    expect(await page.locator('#details').innerText()).toMatch(/DEPENDENCIES\s+subgoals\s+challenge\s+gate/);
    await page.locator('#tab-runs').click();
    const runs = await page.locator('#panel-runs').innerText();
    // The goal-run routes may be served or not; either way the panel answers and the page goes on.
    expect(runs).toMatch(/This server does not run goals|No goal runs yet|Start run/);
    await page.screenshot({ path: 'test-artifacts/serve-page-flow.png' });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('asks for the key of a server with keys, keeps it, and sends it with every call', async () => {
    const keyed = await startServe([AGENTS[0]!, ...SCRIPTED, '--port', '0', '--data', join(data, 'keyed')], {
      env: { META_AGENT_API_KEYS: KEY },
    });
    try {
      const { page, problems } = await open(keyed.url);
      await until(() => page.locator('#notice').textContent()).toContain('this server asks for an API key');
      await page.locator('#api-key').fill(KEY);
      await page.locator('#api-key').press('Enter');
      await until(() => page.locator('#graph g.node').count()).toBe(3);
      expect(await page.locator('#notice').isHidden()).toBe(true);
      await send(page, 'Ann', 2);
      await until(() => currentNode(page)).toBe('ask_topic');
      expect(await page.evaluate(() => localStorage.getItem('meta-agent.apiKey'))).toBe(KEY);
      expect(problems).toEqual([]);
      await page.close();
    } finally {
      await keyed.stop();
    }
  });
});

/** The node names of `g.node` elements (in the SVG's order, which is Graphviz's). */
async function namesOf(groups: Locator): Promise<string[]> {
  return Promise.all(
    (await groups.all()).map(async (group) => (await group.getAttribute('aria-label')) ?? ''),
  );
}

/** Each row's cells but the last (a clock time). */
async function rowsOf(rows: Locator): Promise<string[][]> {
  return Promise.all(
    (await rows.all()).map(async (row) => (await row.locator('td').allTextContents()).slice(0, -1)),
  );
}
