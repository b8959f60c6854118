/* The web face: connects to rosbridge with roslibjs, maps fay_msgs cues with its own table
 * (face_map.json) and drives the SVG face or a Live2D model (the installed sample or the
 * user's; live2d_face.js, which also translates the table's names through the model's profile).
 *
 *   action_cue      behavior -> TapBody motion (light/strong variant by intensity),
 *                   affect -> expression F01.. (sentiment picks one for an unknown affect)
 *   visemes         mouth opening scheduled against VisemeTrack.header.stamp
 *   reply           subtitles
 *   robot_speaking  stop the mouth on barge-in, return to the rest expression afterwards
 *
 * Clock assumption: header.stamp is ROS time = the robot's wall clock (no sim time), and the
 * browser's Date.now() reads the same clock (same host, or hosts synchronised by NTP). Frame
 * i opens the mouth at stamp + frames[i].start. `?clock_offset_ms=N` corrects a known skew;
 * a track whose stamp is more than mouth.late_track_seconds away from the browser's clock is
 * taken as a clock disagreement and played from its arrival instead (data-clock="skewed").
 *
 * State for people and tests is mirrored on <body data-*> and in window.fayFace.
 */
(function () {
  'use strict';

  const params = new URLSearchParams(location.search);
  const clockOffsetMs = Number(params.get('clock_offset_ms') || 0);
  const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, Number(v) || 0));

  const state = {
    connection: 'connecting', url: '', expression: '', behavior: 'idle', motion: 'Idle', motionPriority: 0,
    motionUntil: 0, mouth: 0, viseme: 'sil', utterance: '', speaking: false, clock: 'synced', blinks: 0,
    renderer: 'svg', modelMotion: '', reconnects: 0, events: [],
  };
  const fayFace = { state, map: null, config: null };
  window.fayFace = fayFace;

  function log(kind, detail) {
    state.events.push(Object.assign({ kind, t: Date.now() }, detail));
    if (state.events.length > 300) state.events.shift();
  }

  function mirror() {
    const d = document.body.dataset;
    d.connection = state.connection;
    d.expression = state.expression;
    d.behavior = state.behavior;
    d.motion = state.motion;
    d.mouth = state.mouth.toFixed(2);
    d.viseme = state.viseme;
    d.utterance = state.utterance;
    d.speaking = String(state.speaking);
    d.clock = state.clock;
    d.blinks = String(state.blinks);
    d.renderer = state.renderer;
    d.modelMotion = state.modelMotion;
    const text = { connected: 'connected', connecting: 'connecting…', disconnected: 'disconnected, retrying…',
      'no-token': 'no access token: open the link `fay-ros web` printed (fay-ros web --show-urls)' };
    document.getElementById('connection-text').textContent = (text[state.connection] || state.connection) +
      (state.url ? ' · ' + state.url : '');
  }

  // ---- the table ------------------------------------------------------------------------

  function pickMotion(map, behavior, intensity) {
    const m = map.motion;
    const indexes = has(m.behaviors, behavior) ? m.behaviors[behavior] : m.default;
    if (!indexes || !indexes.length) return null;
    return intensity >= m.strong_from_intensity ? indexes[indexes.length - 1] : indexes[0];
  }

  function pickExpression(map, affect, sentiment) {
    const e = map.expression;
    if (has(e.affects, affect)) return e.affects[affect];
    for (const rule of e.sentiment_fallback) {
      if ((rule.min === undefined || sentiment >= rule.min) && (rule.max === undefined || sentiment <= rule.max)) {
        return rule.expression;
      }
    }
    return e.default;
  }

  function mouthFor(map, frame) {
    const v = map.mouth.visemes[frame.name];
    return typeof v === 'number' ? v : clamp(frame.mouth_open, 0, 1);
  }

  fayFace.pickMotion = (b, i) => pickMotion(fayFace.map, b, i);
  fayFace.pickExpression = (a, s) => pickExpression(fayFace.map, a, s);

  // ---- behaviour ------------------------------------------------------------------------

  let renderer = null;
  let track = null;          // the VisemeTrack being voiced
  let idleTimer = null;
  let subtitleTimer = null;

  function setExpression(name, why) {
    if (name === state.expression) return;
    state.expression = name;
    renderer.setExpression(name);
    log('expression', { expression: name, why });
  }

  function onCue(msg) {
    const map = fayFace.map;
    const now = Date.now();
    const expression = pickExpression(map, msg.affect, msg.sentiment);
    setExpression(expression, msg.affect);
    const index = pickMotion(map, msg.behavior, msg.intensity);
    const running = now < state.motionUntil;
    if (running && msg.priority < state.motionPriority) {
      // A lower-priority cue never cuts a running motion short; it is dropped (the next
      // sentence brings a new cue anyway).
      log('cue-dropped', { behavior: msg.behavior, priority: msg.priority, running: state.motion });
    } else if (index === null) {
      if (!running) toIdle();
    } else {
      const group = map.motion.group;
      // The table's choice (TapBody:index) is the state; a Live2D model whose profile names
      // its own motions reports what it plays (data-model-motion).
      state.modelMotion = renderer.playMotion(group, index, msg.behavior, msg.intensity) || '';
      state.motion = group + ':' + index;
      state.motionPriority = msg.priority;
      state.motionUntil = now + map.motion.hold_seconds * 1000;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(toIdle, map.motion.hold_seconds * 1000);
      log('motion', { motion: state.motion, model_motion: state.modelMotion, behavior: msg.behavior,
        intensity: msg.intensity, priority: msg.priority });
    }
    state.behavior = msg.behavior;
    state.utterance = msg.utterance_id;
    mirror();
  }

  function toIdle() {
    if (Date.now() < state.motionUntil) return;
    state.motion = 'Idle';
    state.modelMotion = '';
    state.motionPriority = 0;
    renderer.idle();
    mirror();
  }

  function stampMs(stamp) { return stamp.sec * 1000 + stamp.nanosec / 1e6 + clockOffsetMs; }

  function onVisemes(msg) {
    const map = fayFace.map;
    const now = Date.now();
    let start = stampMs(msg.header.stamp);
    const tolerance = map.mouth.late_track_seconds * 1000;
    if (Math.abs(start - now) > tolerance) {
      state.clock = 'skewed';
      log('clock-skew', { stamp_ms: start, now, utterance: msg.utterance_id });
      start = now;
    } else {
      state.clock = 'synced';
    }
    track = {
      id: msg.utterance_id,
      start,
      end: start + msg.duration * 1000,
      frames: msg.frames.map((f) => ({ name: f.name, at: start + f.start * 1000, value: mouthFor(map, f) })),
      current: -1,
    };
    log('track', { utterance: msg.utterance_id, start, end: track.end, frames: track.frames.length });
    tick();
  }

  function setMouth(value, viseme, frame) {
    state.mouth = value;
    state.viseme = viseme;
    renderer.setMouth(value, viseme);
    if (frame) log('mouth', { viseme, value, at: frame.at, applied: Date.now(), utterance: track && track.id });
    mirror();
  }

  function tick() {
    if (!track) return;
    const now = Date.now();
    if (now >= track.end) {
      track = null;
      setMouth(0, 'sil', null);
      return;
    }
    let i = track.current;
    while (i + 1 < track.frames.length && track.frames[i + 1].at <= now) i += 1;
    if (i !== track.current) {
      track.current = i;
      const f = track.frames[i];
      setMouth(f.value, f.name, f);
    }
  }

  function frameLoop() { tick(); requestAnimationFrame(frameLoop); }

  function onSpeaking(msg) {
    state.speaking = Boolean(msg.speaking);
    if (!state.speaking) {
      if (track) { log('track-stopped', { utterance: track.id }); track = null; setMouth(0, 'sil', null); }
      setExpression(fayFace.map.expression.rest, 'rest');
      hideSubtitleLater();
    }
    mirror();
  }

  function onReply(msg) {
    const el = document.getElementById('subtitle');
    if (msg.text) {
      el.textContent = msg.text;
      el.classList.add('shown');
    }
    log('reply', { text: msg.text, utterance: msg.conversation_id + ':' + msg.seq });
    // Without a voice (no tts running) nobody says "done speaking": hide after a reading time.
    hideSubtitleLater(msg.text ? msg.text.length * 150 : 0);
  }

  function hideSubtitleLater(extraMs) {
    clearTimeout(subtitleTimer);
    subtitleTimer = setTimeout(() => {
      if (state.speaking) return;
      document.getElementById('subtitle').classList.remove('shown');
    }, fayFace.map.subtitles.hold_s * 1000 + (extraMs || 0));
  }

  // ---- rosbridge ------------------------------------------------------------------------

  let ros = null;
  let textInput = null;
  let interrupt = null;

  // The access token: door.js (from the link's fragment, kept in localStorage so the face
  // reopens without the link).
  const TOKEN_KEY = 'fay_ros.token';
  const accessToken = () => fayDoor.token(() => localStorage, TOKEN_KEY);

  function connect(config, delayMs) {
    const url = fayDoor.rosbridgeUrl(config);
    state.url = url; // shown and logged: without the token
    if (!config.token) {
      state.connection = 'no-token';
      mirror();
      return;
    }
    const ns = config.namespace === '/' ? '' : config.namespace;
    const connection = new ROSLIB.Ros({
      url: url + (url.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(config.token),
    });
    ros = connection;
    // robot_speaking is latched (transient local). rosbridge-server-rs subscribes volatile
    // unless the subscribe op asks otherwise, and it cannot infer the QoS from a publisher it
    // has not discovered yet, so ask explicitly; rosbridge_suite ignores the extra field.
    const latched = new Set([(config.namespace === '/' ? '' : config.namespace) + '/robot_speaking']);
    const send = connection.callOnConnection.bind(connection);
    connection.callOnConnection = (message) => {
      if (message && message.op === 'subscribe' && latched.has(message.topic)) {
        message.qos = { durability: 'transient_local', reliability: 'reliable', history: 'keep_last', depth: 1 };
      }
      return send(message);
    };
    let retried = false;
    const retry = () => {
      if (retried || ros !== connection) return;
      retried = true;
      state.connection = 'disconnected';
      mirror();
      const next = Math.min(5000, Math.max(500, (delayMs || 250) * 2));
      setTimeout(() => { state.reconnects += 1; connect(config, next); }, next);
    };
    connection.on('connection', () => {
      state.connection = 'connected';
      log('connected', { url });
      const topic = (name, type) => new ROSLIB.Topic({ ros: connection, name: ns + '/' + name, messageType: type });
      topic('action_cue', 'fay_msgs/msg/ActionCue').subscribe(onCue);
      topic('visemes', 'fay_msgs/msg/VisemeTrack').subscribe(onVisemes);
      topic('reply', 'fay_msgs/msg/Utterance').subscribe(onReply);
      topic('robot_speaking', 'fay_msgs/msg/SpeechState').subscribe(onSpeaking);
      // Advertised now, not on the first message: DDS discovery takes a moment, and a
      // message published by a brand-new publisher can reach nobody.
      textInput = topic('text_input', 'fay_msgs/msg/Transcript');
      textInput.advertise();
      interrupt = topic('interrupt', 'std_msgs/msg/Empty');
      interrupt.advertise();
      mirror();
    });
    connection.on('error', (e) => { log('error', { message: String(e && e.message || e) }); retry(); });
    connection.on('close', () => { log('closed', { url }); retry(); });
  }

  function sendText(config, text) {
    if (!textInput || state.connection !== 'connected') return false;
    const now = Date.now();
    textInput.publish({
      header: { stamp: { sec: Math.floor(now / 1000), nanosec: (now % 1000) * 1e6 }, frame_id: 'web' },
      // Who is speaking is bound to the token on the server; whatever is written here is replaced.
      user_id: '', text, is_final: true, confidence: 1.0, language: '', words: [],
    });
    log('sent', { text });
    return true;
  }

  // ---- start ----------------------------------------------------------------------------

  async function loadConfig() {
    try {
      const r = await fetch('config.json', { cache: 'no-store' });
      if (r.ok) return await r.json();
    } catch (e) { /* served by another web server: defaults below */ }
    const map = await (await fetch('face_map.json', { cache: 'no-store' })).json();
    return { rosbridge_port: 9090, namespace: '/fay', face_map: map, live2d: null };
  }

  async function start() {
    const config = await loadConfig();
    config.token = accessToken();
    fayFace.config = config;
    fayFace.map = config.face_map;
    renderer = new SvgFace(document.getElementById('face'), fayFace.map, () => { state.blinks += 1; mirror(); });
    // A Live2D model is used when fay-ros web serves one: by default with --live2d, or when the
    // page asks for it (?face=live2d, e.g. the installed sample); ?face=svg keeps the SVG face.
    const wanted = params.get('face');
    if (config.live2d && (wanted === 'live2d' || (config.live2d.default && wanted !== 'svg'))) {
      const stage = document.getElementById('live2d-stage');
      const svg = document.getElementById('face');
      try {
        stage.hidden = false;
        svg.style.display = 'none'; // before loading: the model is fitted to the whole stage
        renderer = await Live2DFace.create(stage, config.live2d, fayFace.map);
        state.renderer = 'live2d';
        fayFace.live2d = renderer.readBack;
        fayFace.live2dParam = (id) => renderer.readBack.param(id);
      } catch (e) {
        stage.hidden = true;
        svg.style.display = '';
        log('live2d-failed', { message: String(e && e.message || e) });
        state.renderer = 'svg (Live2D failed: ' + (e && e.message || e) + ')';
      }
    }
    setExpression(fayFace.map.expression.default, 'start');
    renderer.idle();
    document.getElementById('chat').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const input = document.getElementById('chat-text');
      if (input.value.trim() && sendText(config, input.value.trim())) input.value = '';
    });
    document.getElementById('chat-stop').addEventListener('click', () => {
      if (interrupt && state.connection === 'connected') { interrupt.publish({}); log('interrupt', {}); }
    });
    setInterval(tick, 30); // rAF pauses in hidden tabs; the mouth must still close on time
    requestAnimationFrame(frameLoop);
    mirror();
    connect(config, 250);
  }

  fayFace.ready = start().catch((e) => {
    log('start-failed', { message: String(e && e.message || e) });
    document.getElementById('connection-text').textContent = 'cannot start: ' + (e && e.message || e);
    throw e;
  });
})();
