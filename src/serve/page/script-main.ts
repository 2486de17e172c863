/**
 * What ties the page together: the graph picker (GET /v1/graphs), the side panel's tabs, the key field
 * shown when the server asks for a key, and the place (graph and conversation) kept in the address, so
 * a reload comes back to the same conversation.
 */
export const MAIN_SCRIPT = String.raw`
  const picker = document.getElementById('graph-picker');
  const description = document.getElementById('graph-description');
  const notice = document.getElementById('notice');
  const keyForm = document.getElementById('key-form');
  const keyInput = document.getElementById('api-key');
  const tabs = document.querySelectorAll('[role=tab]');
  let graphs = [];

  function showTab(name) {
    tabs.forEach(function (tab) {
      const on = tab.dataset.tab === name;
      tab.setAttribute('aria-selected', String(on));
      document.getElementById('panel-' + tab.dataset.tab).hidden = !on;
    });
    if (name === 'runs') void showRuns();
  }
  tabs.forEach(function (tab) {
    tab.addEventListener('click', function () { showTab(tab.dataset.tab); });
  });

  function showNotice(text) {
    notice.textContent = text;
    notice.hidden = !text;
  }

  /** The server refused the key (or wants one): the key field shows, with the server's words. */
  function askForKey(message) {
    keyForm.hidden = false;
    showNotice(message);
    keyInput.focus();
  }

  keyForm.addEventListener('submit', function (event) {
    event.preventDefault();
    apiKey = keyInput.value.trim();
    if (apiKey) localStorage.setItem(KEY_ITEM, apiKey);
    else localStorage.removeItem(KEY_ITEM);
    keyInput.value = '';
    keyForm.hidden = true;
    showNotice('');
    void loadGraphs();
  });

  function rememberPlace() {
    const place = chat.graph ? encodeURIComponent(chat.graph.name) + (chat.id ? '/' + encodeURIComponent(chat.id) : '') : '';
    history.replaceState(null, '', place ? '#' + place : location.pathname);
  }

  function placeFromAddress() {
    const parts = location.hash.slice(1).split('/').map(function (part) { return decodeURIComponent(part); });
    return { graph: parts[0] || '', conversation: parts[1] || '' };
  }

  async function loadGraphs() {
    try {
      graphs = (await getJson('/v1/graphs')).data;
    } catch (error) {
      showDrawingProblem(error.message);
      return;
    }
    picker.replaceChildren();
    graphs.forEach(function (graph) {
      const label = graph.name + (graph.kind === 'flow' ? ' (flow)' : graph.selfReferential ? ' (edits itself)' : '');
      const option = el('option', '', label);
      option.value = graph.name;
      picker.appendChild(option);
    });
    if (graphs.length === 0) {
      showDrawingProblem('This server serves no graphs.');
      return;
    }
    const place = placeFromAddress();
    const named = graphs.find(function (graph) { return graph.name === place.graph; });
    const first = named || graphs.find(function (graph) { return graph.kind === 'agent'; }) || graphs[0];
    await pickGraph(first.name, named ? place.conversation : '');
  }

  /** Shows graph name (and conversation, when given and still there); a new pick leaves the conversation. */
  async function pickGraph(name, conversation) {
    chat.graph = graphs.find(function (graph) { return graph.name === name; });
    picker.value = name;
    description.textContent = chat.graph.description;
    leaveConversation();
    drawing.zoomed = false;
    clearInspector();
    setBusy(false);
    if (chat.graph.kind === 'flow')
      conversationLine.textContent = name + ' is a flow: it runs passes (POST /v1/flows/' + name + '/passes), not conversations. Its drawing is here to inspect.';
    if (conversation) {
      try {
        const view = await getJson('/v1/conversations/' + encodeURIComponent(conversation));
        if (chat.graph.name === name && view.graph === name) return joinConversation(view);
      } catch (error) {
        say('note', 'Conversation ' + conversation + ' is not there any more: ' + error.message);
      }
    }
    rememberPlace();
    try {
      const data = await getJson('/v1/graphs/' + encodeURIComponent(name) + '/drawing');
      if (chat.graph.name === name && !chat.id) showDrawing(data);
    } catch (error) {
      if (chat.graph.name === name) showDrawingProblem(error.message);
    }
  }

  picker.addEventListener('change', function () { void pickGraph(picker.value, ''); });

  void loadGraphs();
  void showRuns();
`;
