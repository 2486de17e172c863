/**
 * The page at `/`: one self-contained HTML document (style and script inline, nothing fetched but the
 * server's own API), built once. Its Content-Security-Policy lets only this style and this script run
 * and the page talk only to its own server, so no text in a graph or a reply can bring in anything else.
 */
import { createHash } from 'node:crypto';
import { NODE_PANEL_SCRIPT } from '../../export/html-script.js';
import { VIEWER_STYLE } from '../../export/html-style.js';
import { API_SCRIPT } from './script-api.js';
import { CHAT_SCRIPT } from './script-chat.js';
import { DRAWING_SCRIPT } from './script-drawing.js';
import { MAIN_SCRIPT } from './script-main.js';
import { RUNS_SCRIPT } from './script-runs.js';
import { VERSIONS_SCRIPT } from './script-versions.js';
import { PAGE_STYLE } from './style.js';

const STYLE = VIEWER_STYLE + PAGE_STYLE;

// One scope: the parts call each other's functions, and MAIN_SCRIPT, last, starts the page.
const SCRIPT = `(function () {
'use strict';
${NODE_PANEL_SCRIPT}${API_SCRIPT}${DRAWING_SCRIPT}${CHAT_SCRIPT}${VERSIONS_SCRIPT}${RUNS_SCRIPT}${MAIN_SCRIPT}
})();
`;

const BODY = `<header>
<h1 class="brand">meta-agent <span>serve</span></h1>
<label class="picker">Graph <select id="graph-picker"></select></label>
<span id="graph-description" class="description"></span>
<div class="tools">
<form id="key-form" hidden><input id="api-key" type="password" placeholder="API key" autocomplete="off" aria-label="API key"><button type="submit">Use key</button></form>
<button id="new-conversation" type="button" class="primary">New conversation</button>
</div>
</header>
<p id="notice" role="alert" hidden></p>
<main>
<section id="chat" aria-label="Chat">
<div id="conversation-line"></div>
<ol id="messages" aria-live="polite"></ol>
<form id="composer"><textarea id="message" rows="2" placeholder="Message the agent… (Enter sends)" aria-label="Message"></textarea><button id="send" type="submit" class="primary">Send</button></form>
</section>
<section id="drawing" aria-label="Drawing">
<div class="toolbar">
<span id="live" title="Live: following the conversation's events"></span>
<span id="at-node" aria-live="polite"></span>
<span id="version-line"></span>
<span class="spacer"></span>
<span class="legend"><span><i class="current"></i>current</span><span><i class="visited"></i>visited</span><span><i class="added"></i>added</span></span>
<button type="button" data-zoom="out" title="Zoom out">−</button>
<button type="button" data-zoom="fit" title="Fit">Fit</button>
<button type="button" data-zoom="in" title="Zoom in">+</button>
</div>
<div id="graph"></div>
</section>
<aside>
<nav class="tabs" role="tablist">
<button type="button" role="tab" id="tab-inspector" data-tab="inspector" aria-selected="true">Inspector</button>
<button type="button" role="tab" id="tab-versions" data-tab="versions" aria-selected="false">Versions</button>
<button type="button" role="tab" id="tab-runs" data-tab="runs" aria-selected="false">Goal runs</button>
</nav>
<div id="panel-inspector" role="tabpanel"><div id="details" aria-live="polite"><p class="hint">Click a node to see all its fields.</p></div></div>
<div id="panel-versions" role="tabpanel" hidden><div id="versions"></div><div id="diff"></div></div>
<div id="panel-runs" role="tabpanel" hidden>
<form id="run-form" hidden>
<div class="row"><input name="name" placeholder="Name (optional)" aria-label="Run name"><input name="maxSteps" type="number" min="1" placeholder="Max steps" aria-label="Max steps"></div>
<input name="role" placeholder="Role (optional)" aria-label="Role">
<textarea name="goals" rows="3" placeholder="Goals, one a line (1 to 5)" aria-label="Goals" required></textarea>
<div><button type="submit" class="primary">Start run</button> <span class="problem"></span></div>
</form>
<div id="runs"></div>
<div id="run-view"></div>
</div>
</aside>
</main>`;

/** The page's HTML. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>meta-agent serve</title>
<style>${STYLE}</style>
</head>
<body>
${BODY}
<script>${SCRIPT}</script>
</body>
</html>
`;

/** The headers the page goes out with. */
export const PAGE_HEADERS: Record<string, string> = {
  'Content-Security-Policy': [
    "default-src 'none'",
    `script-src '${digest(SCRIPT)}'`,
    `style-src '${digest(STYLE)}'`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

/** A CSP source for inline text: its SHA-256. */
function digest(text: string): string {
  return `sha256-${createHash('sha256').update(text).digest('base64')}`;
}
