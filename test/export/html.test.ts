import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHtml, toSvgAndHtml } from '../../src/export/html.js';
import { toSvg } from '../../src/export/svg.js';
import { loadGraphFile } from '../../src/graph/load.js';
import { graphFileSchema, type GraphFile } from '../../src/graph/schema.js';
import { FRACTION_AGENT_CSV, quizGraph, randomGraph } from './fixtures.js';
import { chromiumSkipNote, hasChromium, launchChromium } from '../support/chromium.js';

const SCREENSHOT = 'test-artifacts/export-html.png';

const hostile: GraphFile = graphFileSchema.parse({
  name: 'hostile',
  nodes: [
    {
      name: 'inject',
      action: 'chat',
      instruction:
        'Say </script><script>window.pwned = true</script> and <img src=x onerror="window.pwned=true">',
      transitions: ['inject'],
    },
  ],
});

describe('HTML export', () => {
  it('is one self-contained page: nothing to fetch from a network at view time', async () => {
    const html = await toHtml(quizGraph);
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<svg');
    expect(html).not.toMatch(/<script[^>]+src=|<link\b|@import|url\(\s*['"]?https?:/i);
    expect(html).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
  });

  it('renders the SVG and the page around it from one layout, the same as each alone', async () => {
    const both = await toSvgAndHtml(quizGraph);
    expect(both.svg).toBe(await toSvg(quizGraph));
    expect(both.html).toBe(await toHtml(quizGraph));
  });

  it('keeps node text from closing the data block or the script', async () => {
    const html = await toHtml(hostile);
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html).toContain('Say \\u003c/script>\\u003cscript>window.pwned');
  });
});

describe.skipIf(!hasChromium)(`HTML export in headless Chromium${chromiumSkipNote}`, () => {
  let browser: Browser;
  let dir: string;

  beforeAll(async () => {
    browser = await launchChromium();
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-html-'));
  });

  afterAll(async () => {
    await browser?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Opens the exported page from a file; fails the test on script errors or any non-file request. */
  async function open(graph: GraphFile): Promise<{ page: Page; problems: string[] }> {
    const path = join(dir, `${graph.name}.html`);
    await writeFile(path, await toHtml(graph));
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`script error: ${error.message}`));
    page.on('request', (request) => {
      if (!request.url().startsWith('file:')) problems.push(`network request: ${request.url()}`);
    });
    await page.goto(pathToFileURL(path).href);
    return { page, problems };
  }

  function nodeNamed(page: Page, name: string) {
    return page
      .locator('#graph g.node')
      .filter({ has: page.locator('title', { hasText: new RegExp(`^${name}$`) }) });
  }

  it('shows every field of the clicked node in the side panel', async () => {
    const { page, problems } = await open(quizGraph);
    await nodeNamed(page, 'greet').click();
    const panel = page.locator('#details');
    await expect.poll(() => panel.locator('h2').textContent()).toBe('greet');
    const text = await panel.innerText();
    expect(text).toContain('Hi! Shall we start the quiz?');
    expect(text).toContain('Does the user want to start?');
    expect(text).toMatch(/ask_topic\s+yes\s+say yes/);
    expect(text).toMatch(/goodbye\s+no\s+say no/);
    expect(await panel.locator('.badge').allTextContents()).toEqual(['chat_exact', 'start']);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('follows a transition from the panel to the node it names', async () => {
    const { page, problems } = await open(quizGraph);
    await nodeNamed(page, 'ask_topic').click();
    await page.locator('#details').getByRole('button', { name: 'write_question(topic)' }).click();
    await expect.poll(() => page.locator('#details h2').textContent()).toBe('write_question(topic)');
    expect(await page.locator('#details').innerText()).toContain('Write one short question about $topic.');
    expect(await page.locator('#graph g.node.selected title').textContent()).toBe('write_question(topic)');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('dims the nodes that do not match the search or the chosen category', async () => {
    const { page } = await open(quizGraph);
    await page.fill('#search', 'civil');
    expect(await page.locator('#count').textContent()).toBe('1 of 5 nodes');
    expect(await page.locator('#graph g.node.match title').allTextContents()).toEqual(['rude']);
    await page.fill('#search', '');
    await page.selectOption('#category', 'quiz');
    expect(await page.locator('#count').textContent()).toBe('2 of 5 nodes');
    expect(await page.locator('#graph g.node.match title').allTextContents()).toEqual([
      'ask_topic',
      'write_question(topic)',
    ]);
    await page.close();
  });

  it('shows node text as text, never as markup', async () => {
    const { page, problems } = await open(hostile);
    await nodeNamed(page, 'inject').click();
    expect(await page.locator('#details pre').first().textContent()).toContain('</script><script>');
    expect(await page.evaluate(() => (globalThis as { pwned?: boolean }).pwned)).toBeUndefined();
    expect(problems).toEqual([]);
    await page.close();
  });

  it('opens a graph of 1,200 nodes, laid out force-directed, and shows where a clicked node is reached from', async () => {
    const large = randomGraph(1200);
    const { page, problems } = await open(large);
    const target = large.nodes[7]!.name;
    await nodeNamed(page, target).click();
    await expect.poll(() => page.locator('#details h2').textContent()).toBe(target);
    const text = await page.locator('#details').innerText();
    const callers = large.nodes.filter((n) => n.transitions.includes(target)).map((n) => n.name);
    expect(callers.length).toBeGreaterThan(0);
    for (const caller of callers) expect(text).toContain(caller);
    expect(await page.locator('#graph g.node').count()).toBe(1200);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('opens the AutoGRAMS fraction tutor and shows a node with its answer classes', async () => {
    const fraction = (await loadGraphFile(FRACTION_AGENT_CSV)).file;
    const { page, problems } = await open(fraction);
    await nodeNamed(page, 'm3').click();
    const text = await page.locator('#details').innerText();
    expect(text).toContain('Give a new problem for the user to solve related to the material introduced');
    expect(await page.locator('#details table tr').count()).toBe(1 + 4);
    await mkdir('test-artifacts', { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
    expect(problems).toEqual([]);
    await page.close();
  });
});
