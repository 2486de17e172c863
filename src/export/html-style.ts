/** The stylesheet of the interactive HTML export, inlined so the page needs no network. */
export const VIEWER_STYLE = `
*, *::before, *::after { box-sizing: border-box; }
html, body { height: 100%; margin: 0; }
body {
  display: flex; flex-direction: column;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
  color: #1f2933; background: #f5f7fa;
}
header {
  display: flex; flex-wrap: wrap; align-items: center; gap: 12px;
  padding: 10px 16px; background: #fff; border-bottom: 1px solid #d9e2ec;
}
header h1 { margin: 0; font-size: 17px; font-weight: 650; }
header .description { color: #52606d; flex: 1 1 200px; min-width: 0; }
header .tools { display: flex; gap: 8px; align-items: center; margin-left: auto; }
header input, header select, header button {
  font: inherit; padding: 4px 8px; border: 1px solid #bcccdc; border-radius: 6px; background: #fff; color: inherit;
}
header input { width: 220px; }
header button { cursor: pointer; min-width: 32px; }
header button:hover { background: #f0f4f8; }
#count { color: #627d98; font-size: 12px; min-width: 90px; text-align: right; }
main { flex: 1; display: flex; min-height: 0; }
#graph { flex: 1; overflow: auto; padding: 16px; min-width: 0; }
#graph svg { display: block; margin: 0 auto; }
#graph g.node { cursor: pointer; }
/* Arrows are drawn after boxes; one that crosses a box must not take its clicks. */
#graph g.edge { pointer-events: none; }
#graph g.node:hover > path, #graph g.node:hover > polygon { stroke: #1f6feb; }
#graph g.node:focus { outline: none; }
#graph g.node:focus-visible > path, #graph g.node:focus-visible > polygon { stroke: #1f6feb; stroke-width: 2.5; }
#graph g.node.selected > path, #graph g.node.selected > polygon, #graph g.node.selected > ellipse {
  stroke: #1f6feb; stroke-width: 3;
}
body.filtering #graph g.node.dim, body.filtering #graph g.edge { opacity: 0.25; }
body.filtering #graph g.node.match > path, body.filtering #graph g.node.match > polygon { stroke: #e8590c; stroke-width: 2.5; }
aside {
  width: 400px; max-width: 45vw; overflow: auto; background: #fff; border-left: 1px solid #d9e2ec; padding: 16px 18px;
}
aside .hint { color: #627d98; }
aside h2 { margin: 0 0 6px; font-size: 18px; word-break: break-word; }
.badges { display: flex; flex-wrap: wrap; gap: 6px; margin-bottom: 12px; }
.badge { font-size: 12px; padding: 1px 8px; border-radius: 10px; background: #e3f0ff; color: #1d4f91; }
.badge.category { background: #eef2f7; color: #334e68; }
.badge.start { background: #e3f9e5; color: #1f6f3a; }
.badge.interjection { background: #fff3e6; color: #b44d12; }
dl { margin: 0; }
dt { margin-top: 12px; font-size: 12px; font-weight: 600; text-transform: uppercase; letter-spacing: 0.04em; color: #627d98; }
dd { margin: 4px 0 0; }
dd pre {
  margin: 0; padding: 8px 10px; white-space: pre-wrap; word-break: break-word; background: #f5f7fa;
  border-radius: 6px; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
}
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; vertical-align: top; padding: 4px 6px; border-bottom: 1px solid #e4e7eb; }
th { font-weight: 600; color: #52606d; }
button.link {
  font: inherit; padding: 0; border: 0; background: none; color: #1f6feb; cursor: pointer; text-align: left;
}
button.link:hover { text-decoration: underline; }
ul.refs { margin: 0; padding-left: 18px; }
`;
