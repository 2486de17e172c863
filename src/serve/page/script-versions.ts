/**
 * The page's version history of a self-editing agent: the versions its edits made (who, how, which
 * nodes, when) and, for the one picked (the latest until another is), what it changed, field by field.
 */
export const VERSIONS_SCRIPT = String.raw`
  const versionsBox = document.getElementById('versions');
  const diffBox = document.getElementById('diff');
  const versionsTab = document.getElementById('tab-versions');
  const versionsState = { picked: null, loading: 0 };

  function timeOf(iso) {
    return iso ? new Date(iso).toLocaleTimeString() : '';
  }

  /** Lists the versions of the conversation's graph, or says why there are none. */
  async function showVersions() {
    const load = ++versionsState.loading;
    const conversation = chat.id;
    versionsTab.textContent = 'Versions';
    diffBox.replaceChildren();
    if (!chat.graph || chat.graph.kind !== 'agent' || !chat.graph.selfReferential) {
      versionsState.picked = null;
      versionsBox.replaceChildren(
        hint('Only a self-editing agent (config.selfReferential) has versions: each edit its code makes with self.addNode, self.updateNode or self.removeNode is one.'),
      );
      return;
    }
    if (!conversation) {
      versionsState.picked = null;
      versionsBox.replaceChildren(hint('Start a conversation: each edit the agent makes to its graph shows here.'));
      return;
    }
    let list;
    try {
      list = await getJson('/v1/conversations/' + encodeURIComponent(conversation) + '/versions');
    } catch (error) {
      if (load === versionsState.loading) versionsBox.replaceChildren(el('p', 'problem', error.message));
      return;
    }
    if (load !== versionsState.loading) return;
    const edits = list.data.length - 1;
    versionsTab.textContent = edits > 0 ? 'Versions (' + edits + ')' : 'Versions';
    const table = el('table', 'versions');
    const head = el('tr');
    ['v', 'by', 'op', 'nodes', 'size', 'at'].forEach(function (title) { head.appendChild(el('th', '', title)); });
    table.appendChild(head);
    list.data.slice().reverse().forEach(function (version) {
      const row = el('tr');
      row.dataset.version = String(version.version);
      if (version.version === list.version) row.classList.add('now');
      if (version.version > 0) {
        row.classList.add('pickable');
        row.tabIndex = 0;
        row.addEventListener('click', function () { void showDiff(conversation, version.version); });
        row.addEventListener('keydown', function (event) {
          if (event.key === 'Enter') void showDiff(conversation, version.version);
        });
      }
      row.appendChild(el('td', 'number', String(version.version)));
      row.appendChild(el('td', '', version.by || ''));
      row.appendChild(el('td', 'op ' + version.op, version.reverts ? 'revert of v' + version.reverts : version.op));
      row.appendChild(el('td', '', version.nodes.join(', ')));
      row.appendChild(el('td', 'number', String(version.totalNodes)));
      row.appendChild(el('td', 'subtle', timeOf(version.at)));
      table.appendChild(row);
    });
    versionsBox.replaceChildren(
      el('p', 'subtle', list.graph + ' is at version ' + list.version + (edits === 0 ? ': it has not edited itself yet.' : '. Pick a version to see what it changed.')),
      table,
    );
    if (edits > 0) await showDiff(conversation, versionsState.picked && versionsState.picked <= list.version ? versionsState.picked : list.version);
  }

  /** Shows what version n of the conversation's graph changed. */
  async function showDiff(conversation, n) {
    versionsState.picked = n;
    versionsBox.querySelectorAll('tr[data-version]').forEach(function (row) {
      row.classList.toggle('picked', row.dataset.version === String(n));
    });
    let diff;
    try {
      diff = await getJson('/v1/conversations/' + encodeURIComponent(conversation) + '/versions/' + n + '/diff');
    } catch (error) {
      diffBox.replaceChildren(el('p', 'problem', error.message));
      return;
    }
    if (chat.id !== conversation || versionsState.picked !== n) return;
    const parts = [el('h3', '', 'Version ' + diff.version + ': ' + diff.op + ' by ' + diff.by)];
    if (diff.changes.length === 0) parts.push(hint('It changed nothing that a node keeps.'));
    diff.changes.forEach(function (change) {
      const block = el('section', 'change ' + change.change);
      const title = el('h4');
      title.appendChild(el('span', 'badge ' + change.change, change.change));
      title.appendChild(document.createTextNode(' '));
      title.appendChild(nodeRef(change.name));
      block.appendChild(title);
      const list = el('dl');
      const fields = change.change === 'changed' ? change.fields : Object.keys(change.after || change.before);
      fields.forEach(function (field) {
        const before = change.before && shown(change.before[field]);
        const after = change.after && shown(change.after[field]);
        if (change.change !== 'changed' && !(after || before)) return;
        list.appendChild(el('dt', '', field));
        const dd = el('dd');
        if (change.change === 'changed') {
          dd.appendChild(el('pre', 'before', before || '(unset)'));
          dd.appendChild(el('pre', 'after', after || '(unset)'));
        } else dd.appendChild(el('pre', change.change === 'added' ? 'after' : 'before', after || before));
        list.appendChild(dd);
      });
      block.appendChild(list);
      parts.push(block);
    });
    diffBox.replaceChildren.apply(diffBox, parts);
  }

  /** A field's value as text; empty strings and lists count as unset, as a graph file leaves them out. */
  function shown(value) {
    if (value === undefined || value === null || value === '') return '';
    if (Array.isArray(value) && value.length === 0) return '';
    return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  }
`;
