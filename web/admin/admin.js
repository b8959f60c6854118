/* Fay's admin page: watch the companion and curate what it keeps, through the web door.
 *
 *   timeline   speech/final, text_input, chat/heard (heard), reply, action_cue, robot_speaking,
 *              dialogue/proactive
 *   latency    latency/turns (fay_msgs/TurnLatency): a stacked bar per turn, last N turns
 *   health     /diagnostics: the latest status of every name (`fay/<node>: state`, tables, ...)
 *   memory     memory/recall (include_candidates), memory/confirm (a candidate, by id),
 *              memory/forget (by id, after an explicit second click) -- never the database
 *   layers     the owner's layered profile (/admin/api/profile, read-only from the memory
 *              database of `fay-ros web --admin --memory-db`): soul, insights, awareness,
 *              preferences with their evidence turn ids, the latest events and the changelog;
 *              "Forget this event" (after an explicit second click) is memory/forget with
 *              turn_ids: the memory node deletes the turn and what rests only on it
 *   reminders  the owner's active reminders and open commitments (/admin/api/reminders,
 *              read-only from the same database): text, next due local time, repeat in words,
 *              status; "Cancel" is memory/reminders (action cancel) through the memory node
 *   card       the owner's speaker card (/admin/api/card, read-only from the same database):
 *              name, formality, answer language with the words each was heard in; a change is
 *              memory/remember with the keyed fact /admin/api/card/fact makes (the one the
 *              person's own words would store; confirmed by memory/confirm if the node kept it
 *              as a candidate), clearing is memory/forget -- never the database
 *   knowledge  the knowledge base's documents (/admin/api/knowledge, read from the store of
 *              `fay-ros web --admin --knowledge-db`): source, knowledge base, chunk count, when
 *              it was indexed, its error (a file that could not be read is marked failed)
 *   files      the admin endpoint of `fay-ros web` (/admin/api/files): read, check, save;
 *              the server validates with the project's loaders and answers problems by line
 *
 * The admin token comes once in the link's fragment (#token=...), is kept in this tab's
 * sessionStorage and leaves the address bar. It goes to the websocket URL (the door binds the
 * admin role to it) and, for the file endpoint, in the X-Fay-Token header -- never a cookie,
 * so another site cannot make the browser send it.
 *
 * State for people and tests: <body data-*> and window.fayAdmin.
 */
(function () {
  'use strict';

  const TOKEN_KEY = 'fay_ros.admin_token';
  const TIMELINE_ROWS = 200;
  const LATENCY_TURNS = 20;
  const STAGES = [
    ['speech_end_to_transcript', 'speech end → transcript', '#5b8def'],
    ['llm_time_to_first_token', 'LLM first token', '#e0a000'],
    ['reply_rest', 'rest to first reply', '#8bc34a'],
    ['first_reply_to_first_audio', 'first reply → audio', '#b05bd6'],
  ];

  const state = {
    connection: 'connecting', access: 'checking', timeline: [], turns: [], health: {}, memories: [],
    owner: '', files: [], file: null, version: '', save: '', problems: [], events: [],
  };
  const fayAdmin = { state };
  window.fayAdmin = fayAdmin;
  const $ = (id) => document.getElementById(id);

  function log(kind, detail) {
    state.events.push(Object.assign({ kind, t: Date.now() }, detail));
    if (state.events.length > 300) state.events.shift();
  }

  function mirror() {
    const d = document.body.dataset;
    d.connection = state.connection;
    d.access = state.access;
    d.save = state.save;
    d.memories = String(state.memories.length);
    d.turns = String(state.turns.length);
    d.timeline = String(state.timeline.length);
    const text = { connected: 'connected', connecting: 'connecting…', disconnected: 'disconnected, retrying…',
      refused: 'refused', 'no-token': 'no admin token' };
    $('connection-text').textContent = text[state.connection] || state.connection;
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') node.className = v; else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  }

  function clock(ms) { return new Date(ms).toTimeString().slice(0, 8); }

  // ---- the token ------------------------------------------------------------------------

  const adminToken = () => fayDoor.token(() => sessionStorage, TOKEN_KEY);   // door.js

  async function api(path, options) {
    const init = Object.assign({ cache: 'no-store' }, options || {});
    init.headers = Object.assign({ 'X-Fay-Token': fayAdmin.token }, init.headers || {});
    const r = await fetch('api/' + path, init);
    let body = {};
    try { body = await r.json(); } catch (e) { /* an error page */ }
    return { status: r.status, body };
  }

  function refuse(why) {
    state.access = 'refused';
    state.connection = 'refused';
    $('refused').hidden = false;
    $('refused-text').textContent = why;
    log('refused', { why });
    mirror();
  }

  // ---- timeline -------------------------------------------------------------------------

  function addEvent(kind, who, what) {
    state.timeline.push({ t: Date.now(), kind, who, what });
    if (state.timeline.length > TIMELINE_ROWS) state.timeline.shift();
    const body = $('timeline').tBodies[0];
    const row = el('tr', { class: 'kind-' + kind }, el('td', {}, clock(Date.now())), el('td', {}, kind),
      el('td', {}, who || ''), el('td', {}, what));
    body.prepend(row);
    while (body.rows.length > TIMELINE_ROWS) body.deleteRow(body.rows.length - 1);
    mirror();
  }

  const heard = (label) => (msg) => { if (msg.text) addEvent(label, msg.user_id || 'guest', msg.text); };

  function onReply(msg) {
    if (msg.text && msg.text.trim()) addEvent('reply', msg.user_id || 'guest', msg.text + (msg.source ? '  [' + msg.source + ']' : ''));
  }

  function onCue(msg) {
    addEvent('cue', msg.utterance_id, `${msg.behavior} / ${msg.affect} (${msg.code}, priority ${msg.priority})`);
  }

  function onSpeaking(msg) {
    addEvent('speaking', msg.utterance_id, msg.speaking ? 'speaking' : 'silent');
  }

  function onProactive(msg) {
    const values = (msg.values || []).map((kv) => kv.key + '=' + kv.value).join(' ');
    addEvent('proactive', '', msg.message + (values ? '  ' + values : ''));
  }

  // ---- latency --------------------------------------------------------------------------

  const seconds = (v) => (typeof v === 'number' && isFinite(v) && v > 0 ? v : 0);

  function onTurn(msg) {
    const llm = seconds(msg.llm_time_to_first_token);
    const turn = {
      id: msg.conversation_id,
      speech_end_to_transcript: seconds(msg.speech_end_to_transcript),
      llm_time_to_first_token: llm,
      reply_rest: Math.max(0, seconds(msg.transcript_to_first_reply) - llm),
      first_reply_to_first_audio: seconds(msg.first_reply_to_first_audio),
      total: seconds(msg.voice_to_first_audio),
    };
    state.turns.push(turn);
    if (state.turns.length > LATENCY_TURNS) state.turns.shift();
    drawLatency();
    mirror();
  }

  function drawLatency() {
    const svg = $('latency-chart');
    const width = svg.clientWidth || 500;
    const rowHeight = 12;
    const height = Math.max(1, state.turns.length) * (rowHeight + 4) + 24;
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    svg.style.height = height + 'px';
    const longest = Math.max(0.5, ...state.turns.map((t) => STAGES.reduce((s, [k]) => s + t[k], 0)));
    const scale = (width - 90) / longest;
    const ns = 'http://www.w3.org/2000/svg';
    svg.replaceChildren();
    state.turns.forEach((turn, i) => {
      const y = 4 + i * (rowHeight + 4);
      let x = 40;
      for (const [key, label, colour] of STAGES) {
        const w = turn[key] * scale;
        if (w <= 0) continue;
        const rect = document.createElementNS(ns, 'rect');
        Object.entries({ x, y, width: w, height: rowHeight, fill: colour }).forEach(([k, v]) => rect.setAttribute(k, v));
        const title = document.createElementNS(ns, 'title');
        title.textContent = `${turn.id}: ${label} ${turn[key].toFixed(3)} s`;
        rect.append(title);
        svg.append(rect);
        x += w;
      }
      const text = document.createElementNS(ns, 'text');
      Object.entries({ x: x + 4, y: y + rowHeight - 2, 'font-size': 10, fill: '#444' }).forEach(([k, v]) => text.setAttribute(k, v));
      text.textContent = (turn.total || (x - 40) / scale).toFixed(2) + ' s';
      svg.append(text);
      const index = document.createElementNS(ns, 'text');
      Object.entries({ x: 2, y: y + rowHeight - 2, 'font-size': 10, fill: '#888' }).forEach(([k, v]) => index.setAttribute(k, v));
      index.textContent = '#' + (i + 1);
      svg.append(index);
    });
    const axis = document.createElementNS(ns, 'text');
    Object.entries({ x: 40, y: height - 6, 'font-size': 10, fill: '#888' }).forEach(([k, v]) => axis.setAttribute(k, v));
    axis.textContent = state.turns.length ? `0 … ${longest.toFixed(2)} s` : 'no turn measured yet (latency/turns)';
    svg.append(axis);
  }

  // ---- health ---------------------------------------------------------------------------

  const LEVELS = ['ok', 'warn', 'error', 'stale'];

  function onDiagnostics(msg) {
    for (const status of msg.status || []) {
      state.health[status.name] = { level: LEVELS[status.level] || String(status.level), message: status.message,
        t: Date.now() };
    }
    const body = $('health').tBodies[0];
    body.replaceChildren(...Object.keys(state.health).sort().map((name) => {
      const h = state.health[name];
      return el('tr', { 'data-name': name, 'data-level': h.level }, el('td', {}, name),
        el('td', { class: 'level-' + h.level }, h.level), el('td', {}, h.message), el('td', {}, clock(h.t)));
    }));
  }

  // ---- memory ---------------------------------------------------------------------------

  let services = null;

  function call(name, request) {
    return new Promise((resolve, reject) => {
      services[name].callService(new ROSLIB.ServiceRequest(request), resolve,
        (e) => reject(new Error(String(e))));
    });
  }

  function memoryStatus(text) {
    $('memory-status').textContent = text;
    document.body.dataset.memoryStatus = text;
  }

  // The bridge learns of a service through DDS discovery, which can trail the page's
  // connection by seconds on a loaded machine (or while the memory node starts): a request
  // sent before that is refused as "not available" or silently lost. Every memory call is
  // idempotent (recall reads; confirming or forgetting twice changes nothing more), so one
  // that is refused or unanswered within CALL_WAIT_MS is sent again, for SERVICE_WAIT_MS.
  const CALL_WAIT_MS = 4000;
  const SERVICE_WAIT_MS = 20000;

  function callOnce(name, request) {
    return Promise.race([call(name, request), new Promise((resolve, reject) => {
      setTimeout(() => reject(new Error(`no answer from ${name} within ${CALL_WAIT_MS / 1000} s`)), CALL_WAIT_MS);
    })]);
  }

  async function callWhenAvailable(name, request) {
    const deadline = Date.now() + SERVICE_WAIT_MS;
    for (let delay = 250; ; delay = Math.min(2000, delay * 2)) {
      try {
        return await callOnce(name, request);
      } catch (e) {
        if (!/not available|no answer/i.test(e.message) || Date.now() + delay > deadline || !services) throw e;
        memoryStatus(`waiting for the memory node (${e.message})…`);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  async function search() {
    const owner = $('memory-owner').value.trim();
    if (!owner || !services) return;
    state.owner = owner;
    try {
      const r = await callWhenAvailable('recall', { owner, query: $('memory-query').value.trim(), tags_all: [],
        tags_any: [], n: 100, include_candidates: true, stateless: true });
      state.memories = r.success ? r.nodes : [];
      memoryStatus(r.message);
      log('recall', { owner, count: state.memories.length, message: r.message });
    } catch (e) {
      state.memories = [];
      memoryStatus('recall failed: ' + e.message);
      log('recall', { owner, count: 0, message: 'recall failed: ' + e.message });
    }
    drawMemories();
    mirror();
  }

  function drawMemories() {
    const body = $('memories').tBodies[0];
    body.replaceChildren(...state.memories.map((m) => {
      const actions = el('td', { class: 'actions' });
      if (m.status === 'candidate') {
        actions.append(el('button', { type: 'button', class: 'confirm', onclick: () => confirmMemory(m) }, 'Confirm'));
      }
      actions.append(el('button', { type: 'button', class: 'forget', onclick: () => askForget(m, actions) }, 'Forget'));
      return el('tr', { 'data-id': m.id, 'data-status': m.status },
        el('td', { class: 'content' }, m.content),
        el('td', { class: 'status-' + m.status }, m.status),
        el('td', {}, ...m.tags.map((t) => el('span', { class: 'tag' }, t))),
        el('td', {}, m.node_type + (m.key ? ' · ' + m.key : '')),
        actions);
    }));
  }

  async function confirmMemory(m) {
    // The operator's decision, by id: memory/confirm takes it as it is (a Remember with
    // user_confirmed would be checked against the owner's recent words and could stay a
    // candidate).
    try {
      const r = await callWhenAvailable('confirm', { owner: m.owner, id: m.id });
      memoryStatus(r.message);
      log('confirm', { id: m.id, success: r.success, message: r.message });
    } catch (e) { memoryStatus('confirm failed: ' + e.message); }
    await search();
  }

  function askForget(m, cell) {
    // A second, explicit click: forgetting cannot be undone.
    cell.replaceChildren(el('span', {}, 'Forget for good? '),
      el('button', { type: 'button', class: 'danger forget-yes', onclick: () => forget(m) }, 'Yes, forget'),
      el('button', { type: 'button', class: 'forget-no', onclick: () => drawMemories() }, 'Cancel'));
  }

  async function forget(m) {
    try {
      const r = await callWhenAvailable('forget', { owner: m.owner, id: m.id, query: '', confirm_all: false });
      memoryStatus(r.message);
      log('forget', { id: m.id, success: r.success, message: r.message });
    } catch (e) { memoryStatus('forget failed: ' + e.message); }
    await search();
  }

  // ---- the layered profile (read from the database; forgetting through memory/forget) ----

  const ids = (evidence) => (evidence || []).join(', ');

  function table(cls, head, rows) {
    return el('table', { class: cls },
      el('thead', {}, el('tr', {}, ...head.map((h) => el('th', {}, h)))),
      el('tbody', {}, ...rows.map((cells) => el('tr', {}, ...cells.map((c) => el('td', {}, c))))));
  }

  function eventsTable(owner, events) {
    return el('table', { class: 'layers-events' },
      el('thead', {}, el('tr', {}, ...['turn', 'time', 'text', ''].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...events.map((e) => {
        const actions = el('td', { class: 'actions' });
        const offer = () => actions.replaceChildren(el('button', { type: 'button', class: 'forget-event',
          onclick: () => askForgetEvent(owner, e.turn_id, actions, offer) }, 'Forget this event'));
        offer();
        return el('tr', { 'data-turn': e.turn_id }, el('td', {}, e.turn_id),
          el('td', {}, new Date(e.time * 1000).toLocaleString()), el('td', {}, e.text), actions);
      })));
  }

  function askForgetEvent(owner, turnId, cell, offer) {
    // A second, explicit click: forgetting cannot be undone.
    cell.replaceChildren(el('span', {}, 'Forget this turn and all that rests only on it? '),
      el('button', { type: 'button', class: 'danger forget-event-yes', onclick: () => forgetEvent(owner, turnId) },
        'Yes, forget'),
      el('button', { type: 'button', class: 'forget-event-no', onclick: offer }, 'Cancel'));
  }

  async function forgetEvent(owner, turnId) {
    // Through the memory node (memory/forget with turn_ids), never the database: the node
    // deletes the turn, the memories and the layered-profile items resting only on it, and
    // answers once the layers forgot it too; then the panel is read again.
    // A request sent again (no answer in time: the node may be waiting for its worker) finds
    // the turn gone and says "not found": the panel read afterwards tells whether it is gone.
    let message;
    document.body.dataset.layersForget = 'busy';
    if (!services) {
      message = 'not connected to the robot: nothing forgotten';
    } else {
      try {
        const r = await callWhenAvailable('forget', { owner, id: '', query: '', confirm_all: false,
          turn_ids: [turnId] });
        message = r.message;
        log('forget-event', { owner, turn: turnId, success: r.success, message: r.message });
      } catch (e) {
        message = 'forget failed: ' + e.message;
      }
    }
    const shown = await showLayers(owner);
    const gone = !!shown && !shown.events.some((e) => e.turn_id === turnId);
    document.body.dataset.layersForget = gone ? 'forgotten' : 'failed';
    $('layers-status').textContent = `turn ${turnId}: ${message}. ` + $('layers-status').textContent;
  }

  async function showLayers(forOwner) {
    const owner = forOwner || $('memory-owner').value.trim();
    if (!owner) { $('layers-status').textContent = 'name an owner in the memory panel first'; return; }
    const r = await api('profile?owner=' + encodeURIComponent(owner));
    document.body.dataset.layers = r.status === 200 ? 'shown' : 'none';
    document.body.dataset.layersEvents = r.status === 200 ? String(r.body.events.length) : '0';
    if (r.status !== 200) {
      $('layers-status').textContent = `no layered profile (HTTP ${r.status}: ${r.body.error || ''})`;
      $('layers').replaceChildren();
      return null;
    }
    const p = r.body;
    const L = p.layers;
    const soul = L.soul;
    $('layers-status').textContent = `owner ${p.owner}; buffered signals ${JSON.stringify(p.buffered)}`;
    $('layers').replaceChildren(
      el('h3', {}, 'Soul'),
      el('p', { id: 'layers-portrait' }, soul.portrait || '(no portrait yet)'),
      table('layers-traits', ['trait', 'evidence'], soul.traits.map((t) => [t.text, ids(t.evidence)])),
      el('h3', {}, 'Insights'),
      table('layers-insights', ['status', 'hypothesis', 'confidence', 'evidence'],
        L.insights.items.map((i) => [i.status, i.text, i.confidence.toFixed(2), ids(i.evidence)])),
      el('h3', {}, 'Awareness'),
      table('layers-notes', ['date', 'observation', 'evidence'],
        L.awareness.notes.map((n) => [n.date, n.text, ids(n.evidence)])),
      el('h3', {}, 'Preferences'),
      table('layers-preferences', ['status', 'taste', 'weight', 'how', 'evidence'],
        L.preferences.items.map((q) => [q.status, (q.likes ? 'likes ' : 'dislikes ') + q.thing,
          q.weight.toFixed(2), q.explicit ? 'stated' : 'inferred', ids(q.evidence)])),
      el('h3', {}, 'Events (latest first)'),
      eventsTable(p.owner, p.events),
      el('h3', {}, 'Changelog (latest first)'),
      table('layers-changelog', ['time', 'layer', 'change', 'reason', 'evidence'],
        p.changelog.map((c) => [new Date(c.time * 1000).toLocaleString(), c.layer,
          `${c.old || '–'} → ${c.new || '–'}`, c.reason, ids(c.evidence)])));
    log('layers', { owner, preferences: L.preferences.items.length, changes: p.changelog.length });
    return p;
  }

  // ---- reminders (read from the database; cancelling through memory/reminders) ------------

  async function showReminders(forOwner) {
    const owner = forOwner || $('memory-owner').value.trim();
    if (!owner) { $('reminders-status').textContent = 'name an owner in the memory panel first'; return null; }
    const r = await api('reminders?owner=' + encodeURIComponent(owner));
    const d = document.body.dataset;
    if (r.status !== 200) {
      d.reminders = 'none';
      d.remindersCount = '0';
      $('reminders-status').textContent = `no reminders (HTTP ${r.status}: ${r.body.error || ''})`;
      $('reminders').tBodies[0].replaceChildren();
      $('commitments').tBodies[0].replaceChildren();
      return null;
    }
    const p = r.body;
    $('reminders').tBodies[0].replaceChildren(...p.reminders.map((m) => {
      const actions = el('td', { class: 'actions' }, el('button', { type: 'button', class: 'cancel-reminder',
        onclick: () => cancelReminder(p.owner, m.id) }, 'Cancel'));
      return el('tr', { 'data-reminder': m.id }, el('td', {}, m.text),
        el('td', {}, `${m.due_local.replace('T', ' ')} (${m.tz})`),
        el('td', {}, m.repeat_words || (m.repeat ? m.repeat : 'once')), el('td', {}, m.status), actions);
    }));
    $('commitments').tBodies[0].replaceChildren(...p.commitments.map((c) => el('tr', { 'data-commitment': c.id },
      el('td', {}, c.text), el('td', {}, c.due_hint_local ? c.due_hint_local.replace('T', ' ') : '–'),
      el('td', {}, c.status))));
    d.reminders = 'shown';
    d.remindersCount = String(p.reminders.length);
    d.commitmentsCount = String(p.commitments.length);
    $('reminders-status').textContent =
      `owner ${p.owner}: ${p.reminders.length} reminder(s), ${p.commitments.length} open commitment(s)`;
    log('reminders', { owner, reminders: p.reminders.length, commitments: p.commitments.length });
    return p;
  }

  // ---- the knowledge base's documents (read from the store; shared, no owner) --------------

  async function showKnowledge() {
    const r = await api('knowledge');
    const d = document.body.dataset;
    if (r.status !== 200) {
      d.knowledge = 'none';
      d.knowledgeCount = '0';
      $('knowledge-status').textContent = `no documents shown (HTTP ${r.status}: ${r.body.error || ''})`;
      $('knowledge').tBodies[0].replaceChildren();
      return null;
    }
    const p = r.body;
    $('knowledge').tBodies[0].replaceChildren(...p.documents.map((doc) => el('tr',
      { 'data-source': doc.source, class: doc.error ? 'failed' : '' },
      el('td', {}, doc.source), el('td', {}, doc.kb), el('td', {}, String(doc.chunks)),
      el('td', {}, doc.indexed_local || 'never'), el('td', {}, doc.error || ''))));
    const failed = p.documents.filter((doc) => doc.error).length;
    d.knowledge = 'shown';
    d.knowledgeCount = String(p.documents.length);
    $('knowledge-status').textContent =
      `${p.location}: ${p.documents.length} document(s), ${failed} with an error`;
    log('knowledge', { documents: p.documents.length, failed });
    return p;
  }

  // ---- the speaker card (read from the database; edited through the memory node) ----------

  const CARD_CHOICES = { formality: ['casually', 'formally'], language: ['English', 'Chinese'] };

  async function showCard(forOwner) {
    const owner = forOwner || $('memory-owner').value.trim();
    if (!owner) { $('card-status').textContent = 'name an owner in the memory panel first'; return null; }
    const r = await api('card?owner=' + encodeURIComponent(owner));
    const d = document.body.dataset;
    if (r.status !== 200) {
      d.card = 'none';
      $('card-status').textContent = `no speaker card (HTTP ${r.status}: ${r.body.error || ''})`;
      $('card').tBodies[0].replaceChildren();
      return null;
    }
    const p = r.body;
    $('card').tBodies[0].replaceChildren(...Object.entries(p.card).map(([field, fact]) => {
      const input = CARD_CHOICES[field]
        ? el('select', { class: 'card-input' }, ...CARD_CHOICES[field].map((v) => el('option', { value: v }, v)))
        : el('input', { class: 'card-input', placeholder: 'name' });
      if (fact) input.value = fact.value;
      const actions = el('td', { class: 'actions' },
        el('button', { type: 'button', class: 'card-save', onclick: () => editCard(p.owner, field, input.value) },
          'Save'));
      if (fact) {
        actions.append(el('button', { type: 'button', class: 'card-clear', onclick: () => clearCard(p.owner, field, fact) },
          'Clear'));
      }
      return el('tr', { 'data-field': field }, el('td', {}, field),
        el('td', { class: 'card-value' }, fact ? fact.value : '(not said)'),
        el('td', { class: 'card-evidence' }, fact ? fact.evidence.join(' / ') : ''),
        el('td', {}, input), actions);
    }));
    $('card-line').textContent = p.line;
    d.card = 'shown';
    $('card-status').textContent = `owner ${p.owner}: ` +
      Object.entries(p.card).map(([f, fact]) => `${f} ${fact ? fact.value : '-'}`).join(', ');
    log('card', { owner });
    return p;
  }

  async function editCard(owner, field, value) {
    // The memory is the keyed fact the server makes for this field (the same one the person's
    // own words store), written by the memory node: it supersedes the old value, so the next
    // prompt of this person reads the new card. An operator's edit with nothing heard lately is
    // stored confirmed; when the node keeps it as a candidate, the operator's memory/confirm
    // (the decision this page already makes for candidates) confirms it.
    document.body.dataset.cardEdit = 'busy';
    let message;
    const fact = await api(`card/fact?field=${encodeURIComponent(field)}&value=${encodeURIComponent(value)}`);
    if (fact.status !== 200) {
      message = fact.body.error || `HTTP ${fact.status}`;
    } else if (!services) {
      message = 'not connected to the robot: nothing changed';
    } else {
      try {
        const r = await callWhenAvailable('remember', { owner, content: fact.body.content, node_type: 'observation',
          importance: 0, tags: fact.body.tags, key: fact.body.key, user_confirmed: true, source_session: '',
          source_turn: 0, ttl: 0 });
        message = r.message;
        if (r.success && r.node && r.node.status === 'candidate') {
          message = (await callWhenAvailable('confirm', { owner, id: r.node.id })).message;
        }
        log('card-edit', { owner, field, success: r.success, message });
      } catch (e) {
        message = 'change failed: ' + e.message;
      }
    }
    const shown = await showCard(owner);
    const now = shown && shown.card[field];
    document.body.dataset.cardEdit = now && now.value === value.trim() ? 'saved' : 'failed';
    $('card-status').textContent = `${field}: ${message}. ` + $('card-status').textContent;
  }

  async function clearCard(owner, field, fact) {
    document.body.dataset.cardEdit = 'busy';
    let message;
    try {
      const r = await callWhenAvailable('forget', { owner, id: fact.memory_id, query: '', confirm_all: false });
      message = r.message;
    } catch (e) { message = 'clear failed: ' + e.message; }
    const shown = await showCard(owner);
    document.body.dataset.cardEdit = shown && !shown.card[field] ? 'cleared' : 'failed';
    $('card-status').textContent = `${field}: ${message}. ` + $('card-status').textContent;
  }

  async function cancelReminder(owner, id) {
    // Through the memory node (memory/reminders, action cancel), never the database; then the
    // panel is read again. A request sent again (no answer in time) finds the reminder
    // cancelled and says so: the panel read afterwards tells whether it is gone.
    let message;
    document.body.dataset.reminderCancel = 'busy';
    if (!services) {
      message = 'not connected to the robot: nothing cancelled';
    } else {
      try {
        const r = await callWhenAvailable('reminders', { action: 'cancel', owner, id, text: '', tz: '',
          start_local: '', repeat: '', source_utterance: '', source_turn: '', at: { sec: 0, nanosec: 0 },
          include_done: false });
        message = r.message;
        log('reminder-cancel', { owner, id, success: r.success, message: r.message });
      } catch (e) {
        message = 'cancel failed: ' + e.message;
      }
    }
    const shown = await showReminders(owner);
    const gone = !!shown && !shown.reminders.some((m) => m.id === id);
    document.body.dataset.reminderCancel = gone ? 'cancelled' : 'failed';
    $('reminders-status').textContent = `reminder ${id}: ${message}. ` + $('reminders-status').textContent;
  }

  // ---- files ----------------------------------------------------------------------------

  function editorStatus(text, save) {
    state.save = save;
    $('editor-status').textContent = text;
    mirror();
  }

  function drawGutter() {
    const lines = $('editor-text').value.split('\n').length;
    const bad = new Set(state.problems.map((p) => p.line));
    const gutter = $('editor-gutter');
    gutter.replaceChildren(...Array.from({ length: lines }, (_, i) =>
      el('span', bad.has(i + 1) ? { class: 'bad' } : {}, String(i + 1) + '\n')));
    gutter.scrollTop = $('editor-text').scrollTop;
  }

  function drawProblems() {
    $('editor-problems').replaceChildren(...state.problems.map((p) =>
      el('li', { 'data-line': p.line, onclick: () => goToLine(p.line) }, p.message)));
    drawGutter();
  }

  function goToLine(line) {
    const area = $('editor-text');
    const lines = area.value.split('\n');
    const start = lines.slice(0, Math.max(0, line - 1)).reduce((n, l) => n + l.length + 1, 0);
    area.focus();
    area.setSelectionRange(start, start + (lines[line - 1] || '').length);
  }

  async function openFile(name) {
    const r = await api('files/' + encodeURIComponent(name));
    if (r.status !== 200) { editorStatus(r.body.error || 'cannot read (' + r.status + ')', 'error'); return; }
    state.file = name;
    state.version = r.body.version;
    state.problems = [];
    $('editor-text').value = r.body.text;
    $('editor-path').textContent = r.body.path + ' · picked up by ' + r.body.reloaded_by;
    drawProblems();
    editorStatus('', '');
    log('opened', { file: name });
  }

  async function saveFile(checkOnly) {
    if (!state.file) return;
    editorStatus(checkOnly ? 'checking…' : 'saving…', 'busy');
    const r = await api('files/' + encodeURIComponent(state.file), {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: $('editor-text').value, version: state.version, check_only: !!checkOnly }),
    });
    state.problems = (r.body && r.body.problems) || [];
    drawProblems();
    if (r.status === 200) {
      if (!checkOnly) state.version = r.body.version;
      const warnings = r.body.warnings && r.body.warnings.length ? ' (warnings: ' + r.body.warnings.join('; ') + ')' : '';
      editorStatus((checkOnly ? 'valid, not saved' : 'saved') + warnings, checkOnly ? 'valid' : 'saved');
    } else if (r.status === 422) {
      editorStatus(`not saved: ${state.problems.length} problem(s); the file and the running node are unchanged`,
        'invalid');
    } else {
      editorStatus((r.body && r.body.error) || ('failed (' + r.status + ')'), r.status === 409 ? 'conflict' : 'error');
    }
    log(checkOnly ? 'checked' : 'saved', { file: state.file, status: r.status, problems: state.problems.length });
  }

  // ---- rosbridge ------------------------------------------------------------------------

  let ros = null;

  function connect(config, delayMs) {
    const ns = config.namespace === '/' ? '' : config.namespace;
    const connection = new ROSLIB.Ros({ url: fayDoor.rosbridgeUrl(config) + '/?token=' + encodeURIComponent(fayAdmin.token) });
    ros = connection;
    const send = connection.callOnConnection.bind(connection);
    connection.callOnConnection = (message) => {
      // robot_speaking is latched: ask rosbridge-server-rs for transient local (see face.js).
      if (message && message.op === 'subscribe' && message.topic === ns + '/robot_speaking') {
        message.qos = { durability: 'transient_local', reliability: 'reliable', history: 'keep_last', depth: 1 };
      }
      return send(message);
    };
    let retried = false;
    const retry = () => {
      if (retried || ros !== connection) return;
      retried = true;
      state.connection = 'disconnected';
      services = null;
      mirror();
      const next = Math.min(5000, Math.max(500, (delayMs || 250) * 2));
      setTimeout(() => connect(config, next), next);
    };
    connection.on('connection', () => {
      state.connection = 'connected';
      log('connected', {});
      const topic = (name, type) => new ROSLIB.Topic({ ros: connection, name: name.startsWith('/') ? name : ns + '/' + name,
        messageType: type });
      topic('speech/final', 'fay_msgs/msg/Transcript').subscribe(heard('heard'));
      topic('text_input', 'fay_msgs/msg/Transcript').subscribe(heard('typed'));
      topic('chat/heard', 'fay_msgs/msg/Transcript').subscribe(heard('heard'));
      topic('reply', 'fay_msgs/msg/Utterance').subscribe(onReply);
      topic('action_cue', 'fay_msgs/msg/ActionCue').subscribe(onCue);
      topic('robot_speaking', 'fay_msgs/msg/SpeechState').subscribe(onSpeaking);
      topic('dialogue/proactive', 'diagnostic_msgs/msg/DiagnosticStatus').subscribe(onProactive);
      topic('latency/turns', 'fay_msgs/msg/TurnLatency').subscribe(onTurn);
      topic('/diagnostics', 'diagnostic_msgs/msg/DiagnosticArray').subscribe(onDiagnostics);
      const service = (name, type) => new ROSLIB.Service({ ros: connection, name: ns + '/' + name, serviceType: type });
      services = {
        recall: service('memory/recall', 'fay_msgs/srv/Recall'),
        confirm: service('memory/confirm', 'fay_msgs/srv/Confirm'),
        forget: service('memory/forget', 'fay_msgs/srv/Forget'),
        reminders: service('memory/reminders', 'fay_msgs/srv/Reminders'),
        remember: service('memory/remember', 'fay_msgs/srv/Remember'),
      };
      mirror();
      if (state.owner) search();
    });
    connection.on('error', (e) => { log('error', { message: String(e && e.message || e) }); retry(); });
    connection.on('close', () => { log('closed', {}); retry(); });
  }

  // ---- start ----------------------------------------------------------------------------

  async function start() {
    fayAdmin.token = adminToken();
    if (!fayAdmin.token) { state.connection = 'no-token'; refuse('This page needs an admin token.'); return; }
    // The file endpoint answers the same question the door does (is this an admin token?)
    // before the page opens any socket.
    const listing = await api('files');
    if (listing.status !== 200) {
      refuse(`The admin endpoint refused this token (HTTP ${listing.status}: ${listing.body.error || ''}).`);
      return;
    }
    state.access = 'granted';
    state.files = listing.body.files;
    $('editor-file').replaceChildren(...state.files.map((f) => el('option', { value: f.name }, f.title)));
    $('editor-file').addEventListener('change', () => openFile($('editor-file').value));
    $('editor-check').addEventListener('click', () => saveFile(true));
    $('editor-save').addEventListener('click', () => saveFile(false));
    $('editor-reload').addEventListener('click', () => openFile(state.file || $('editor-file').value));
    $('editor-text').addEventListener('input', drawGutter);
    $('editor-text').addEventListener('scroll', () => { $('editor-gutter').scrollTop = $('editor-text').scrollTop; });
    $('memory-search').addEventListener('submit', (ev) => { ev.preventDefault(); search(); });
    $('layers-go').addEventListener('click', () => showLayers());
    $('reminders-go').addEventListener('click', () => showReminders());
    $('card-go').addEventListener('click', () => showCard());
    $('knowledge-go').addEventListener('click', () => showKnowledge());
    $('latency-n').textContent = String(LATENCY_TURNS);
    $('latency-legend').replaceChildren(...STAGES.map(([, label, colour]) =>
      el('span', {}, el('i', { style: 'background:' + colour }), label)));
    drawLatency();
    await openFile(state.files[0].name);
    const config = await (await fetch('../config.json', { cache: 'no-store' })).json();
    fayAdmin.config = config;
    mirror();
    connect(config, 250);
  }

  fayAdmin.openFile = openFile;
  fayAdmin.showLayers = showLayers;
  fayAdmin.showReminders = showReminders;
  fayAdmin.showKnowledge = showKnowledge;
  fayAdmin.ready = start().catch((e) => {
    log('start-failed', { message: String(e && e.message || e) });
    $('connection-text').textContent = 'cannot start: ' + (e && e.message || e);
    throw e;
  });
})();
