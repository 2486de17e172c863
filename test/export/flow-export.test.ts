import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { diagramToDot } from '../../src/export/dot.js';
import { buildFlowDiagram } from '../../src/export/flow-diagram.js';
import { exportFlow, flowToSvgAndHtml } from '../../src/export/flow-formats.js';
import { loadFlowFile, parseFlowObject } from '../../src/flow/load.js';
import { flowFileSchema, type FlowFile } from '../../src/flow/schema.js';
import { chromiumSkipNote, hasChromium, launchChromium } from '../support/chromium.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/flows/${name}`, import.meta.url));

/** Two roots, a node that needs both, one after it, and a dependency on a name no node has. */
const diamond: FlowFile = flowFileSchema.parse({
  name: 'diamond',
  nodes: [
    { name: 'left', prompt: 'Say "left" & <go>\nnow: #1 | `x`' },
    { name: 'right', prompt: '', compose: 'Only a compose template: $prompt$' },
    {
      name: 'join',
      prompt: 'Join them.',
      dependencies: ['left', 'right'],
      afterQuery: { schema: { type: 'string' }, code: 'answer' },
      fallback: 'none',
    },
    { name: 'end', prompt: 'Finish.', dependencies: ['join', 'ghost'] },
  ],
});

async function text(flow: FlowFile, format: 'dot' | 'svg' | 'json' | 'mermaid' | 'html'): Promise<string> {
  return (await exportFlow(flow, format)).text;
}

describe('flow export: DOT', () => {
  it('labels a tool node with its server, tool and arguments', async () => {
    const flow = flowFileSchema.parse({
      name: 'tools',
      nodes: [
        { name: 'pick', prompt: 'Pick.' },
        {
          name: 'fact',
          tool: { server: 'notes', name: 'lookup', arguments: { key: '$out.pick$' } },
          dependencies: ['pick'],
        },
      ],
    });
    expect(await text(flow, 'dot')).toContain(
      '"fact" [id="ag-node-1", label=<<B>fact</B><BR/><FONT POINT-SIZE="9" COLOR="#52606d">MCP tool notes/lookup</FONT><BR/>{&quot;key&quot;:&quot;$out.pick$&quot;}>',
    );
  });

  it('draws a box per node and an arrow from each dependency to the node that uses it', async () => {
    expect(await text(diamond, 'dot')).toBe(
      [
        'digraph "diamond" {',
        '  graph [rankdir=TB, fontname="Helvetica", fontsize=12, labelloc=t, label=<<B>diamond</B>>, nodesep=0.35, ranksep=0.45];',
        '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", color="#52606d", fontname="Helvetica", fontsize=11, margin="0.14,0.07"];',
        '  edge [color="#52606d", fontname="Helvetica", fontsize=9, fontcolor="#334e68"];',
        '  "left" [id="ag-node-0", label=<<B>left</B><BR/>Say &quot;left&quot; &amp; &lt;go&gt; now: #1 | `x`>, fillcolor="#fff6dc"];',
        '  "right" [id="ag-node-1", label=<<B>right</B><BR/>Only a compose template: $prompt$>, fillcolor="#fff6dc"];',
        '  "join" [id="ag-node-2", label=<<B>join</B><BR/><FONT POINT-SIZE="9" COLOR="#52606d">after-query: schema + code ·<BR/>fallback</FONT><BR/>Join them.>, fillcolor="#e8f5e9"];',
        '  "end" [id="ag-node-3", label=<<B>end</B><BR/>Finish.>, fillcolor="#fff6dc"];',
        '  "ghost" [id="ag-mark-0", style="rounded,dashed", color="#d64545", fontcolor="#d64545", label=<ghost<BR/><FONT POINT-SIZE="8">no such node</FONT>>];',
        '  "left" -> "join";',
        '  "right" -> "join";',
        '  "join" -> "end";',
        '  "ghost" -> "end";',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('goes through the same DOT writer as a graph', async () => {
    expect(await text(diamond, 'dot')).toBe(diagramToDot(buildFlowDiagram(diamond)));
  });
});

describe('flow export: Mermaid', () => {
  it('draws a flowchart with the same ids, escapes and classes as a graph’s', async () => {
    expect(await text(diamond, 'mermaid')).toBe(
      [
        'flowchart TD',
        '  n_left("<b>left</b><br/>Say #quot;left#quot; #amp; #lt;go#gt; now: #35;1 #124; #96;x#96;")',
        '  n_right("<b>right</b><br/>Only a compose template: $prompt$")',
        '  n_join("<b>join</b><br/><i>after-query: schema + code ·<br/>fallback</i><br/>Join them.")',
        '  n_end("<b>end</b><br/>Finish.")',
        '  m_ghost["ghost<br/>no such node"]',
        '  n_left --> n_join',
        '  n_right --> n_join',
        '  n_join --> n_end',
        '  m_ghost --> n_end',
        '  classDef thought fill:#fff6dc,stroke:#52606d',
        '  class n_left,n_right,n_end thought',
        '  classDef code fill:#e8f5e9,stroke:#52606d',
        '  class n_join code',
        '  classDef missing fill:#fff,stroke:#d64545,color:#d64545,stroke-dasharray:4 3',
        '  class m_ghost missing',
        '',
      ].join('\n'),
    );
  });
});

describe('flow export: SVG', () => {
  it('is laid out by Graphviz, with an element for every node and every dependency', async () => {
    const flow = await loadFlowFile(fixture('research.flow.json'));
    const svg = await text(flow, 'svg');
    expect(svg).toMatch(/^<\?xml[\s\S]*<svg[\s\S]*<\/svg>\s*$/);
    flow.nodes.forEach((node, i) => {
      expect(svg).toContain(`<g id="ag&#45;node&#45;${i}" class="node">\n<title>${node.name}</title>`);
    });
    expect(svg.match(/<g id="[^"]*" class="edge">/g)).toHaveLength(3);
    expect(svg).toContain('<title>outline&#45;&gt;draft</title>');
  });
});

describe('flow export: HTML', () => {
  it('is the graph page: the drawing inline, the node data, the viewer script, nothing to fetch', async () => {
    const flow = await loadFlowFile(fixture('research.flow.json'));
    const { svg, html } = await flowToSvgAndHtml(flow);
    expect(await text(flow, 'html')).toBe(html);
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<title>research · meta-agent flow</title>');
    expect(html).toContain(svg.slice(svg.indexOf('<svg')).trim());
    expect(html).not.toMatch(/<script[^>]+src=|<link\b|@import/i);
    const data = JSON.parse(/id="graph-data">(.*)<\/script>/.exec(html)![1]!) as {
      nodes: { name: string; badges: { text: string }[]; fields: { label: string }[] }[];
    };
    const review = data.nodes.find((node) => node.name === 'review')!;
    expect(review.badges.map((badge) => badge.text)).toEqual(['after-query: code · fallback', 'output']);
    expect(review.fields.map((field) => field.label)).toEqual([
      'Prompt',
      'Dependencies',
      'After-query code',
      'Fallback',
    ]);
    expect(data.nodes.find((node) => node.name === 'draft')!.fields.map((field) => field.label)).toEqual([
      'Prompt',
      'Dependencies',
      'Needed by',
      'Compose',
    ]);
  });

  it('keeps hostile text from closing the data block, the script or the title', async () => {
    const html = await text(await loadFlowFile(fixture('hostile.flow.json')), 'html');
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html.match(/<script\b/g)).toHaveLength(2);
    expect(html).not.toMatch(/<img|<svg onload|<\/title><script/);
    expect(html).toContain('Say \\u003c/script>\\u003cscript>window.pwned');
    expect(html).toContain('<h1>hostile &lt;/title&gt;&lt;script&gt;window.pwned = true&lt;/script&gt;</h1>');
  });
});

describe('flow export: JSON and CSV', () => {
  it('writes the validated flow, which reads back to the same flow', async () => {
    const flow = await loadFlowFile(fixture('research.flow.json'));
    const json = await text(flow, 'json');
    expect(json.endsWith('}\n')).toBe(true);
    expect(parseFlowObject(JSON.parse(json), 'research.flow.json')).toEqual(flow);
  });

  it('refuses CSV, a graph format, as a usage error naming the formats a flow has', async () => {
    const refusal = exportFlow(diamond, 'csv');
    await expect(refusal).rejects.toBeInstanceOf(UserError);
    await expect(refusal).rejects.toMatchObject({
      exitCode: 2,
      message: 'a flow cannot be exported as CSV, which holds AutoGRAMS graphs',
      hint: 'use one of: dot, svg, json, mermaid, html',
    });
  });
});

describe.skipIf(!hasChromium)(`flow HTML export in headless Chromium${chromiumSkipNote}`, () => {
  let browser: Browser;
  let dir: string;

  beforeAll(async () => {
    browser = await launchChromium();
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-flow-html-'));
  });

  afterAll(async () => {
    await browser?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Opens the exported page from a file; collects script errors and any non-file request. */
  async function open(file: string): Promise<{ page: Page; problems: string[] }> {
    const path = join(dir, file.replace(/\.flow\.json$/, '.html'));
    await writeFile(path, await text(await loadFlowFile(fixture(file)), 'html'));
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`script error: ${error.message}`));
    page.on('request', (request) => {
      if (!request.url().startsWith('file:')) problems.push(`network request: ${request.url()}`);
    });
    await page.goto(pathToFileURL(path).href);
    return { page, problems };
  }

  const nodeNamed = (page: Page, name: string) =>
    page
      .locator('#graph g.node')
      .filter({ has: page.locator('title', { hasText: new RegExp(`^${name}$`) }) });

  it('shows a clicked node’s prompt, dependencies, compose, after-query and fallback, and follows a dependency', async () => {
    const { page, problems } = await open('research.flow.json');
    await nodeNamed(page, 'review').click();
    const panel = page.locator('#details');
    await expect.poll(() => panel.locator('h2').textContent()).toBe('review');
    const shown = await panel.innerText();
    expect(shown).toContain('Rate the draft from 1 to 10');
    expect(shown).toContain("throw new Error('a number from 1 to 10')");
    expect(shown).toMatch(/Fallback\s+5/i);
    await panel.getByRole('button', { name: 'draft' }).click();
    await expect.poll(() => panel.locator('h2').textContent()).toBe('draft');
    expect(await panel.innerText()).toContain('$out.outline$');
    expect(await page.locator('#graph g.node.selected title').textContent()).toBe('draft');
    await page.fill('#search', 'facts about');
    expect(await page.locator('#count').textContent()).toBe('1 of 4 nodes');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows hostile text as text, never as markup or script', async () => {
    const { page, problems } = await open('hostile.flow.json');
    await nodeNamed(page, 'inject').click();
    const texts = await page.locator('#details pre').allTextContents();
    expect(texts[0]).toContain('</script><script>window.pwned = true</script>');
    expect(texts.join('\n')).toContain('<svg onload=');
    expect(await page.locator('#details img, #details script, #details svg, #details b').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { pwned?: boolean }).pwned)).toBeUndefined();
    expect(problems).toEqual([]);
    await page.close();
  });
});
