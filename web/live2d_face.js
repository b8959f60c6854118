/* Live2D renderer: drives a Cubism 2 or Cubism 4 model through pixi.js 6 and
 * pixi-live2d-display 0.4, loaded from the folder `fay-ros web --live2d DIR` serves (or the
 * installed sample, `--live2d sample`); none of it ships with fay_ros (web/README.md).
 *
 * It offers the same calls as SvgFace, so face.js maps cues the same way for both. The
 * model's own names come from its profile in face_map.json's `live2d` section: which motion
 * group/index a behavior plays, which model expression realises F01.., and the mouth
 * parameters. The mouth parameter (ParamMouthOpenY, or PARAM_MOUTH_OPEN_Y on Cubism 2) is
 * written on every model update after the motions and expressions, so the program owns it;
 * vowel-form parameters are written only while a viseme asks for one. Eye blink, breathing and
 * the idle motion come from the model and the runtime.
 *
 * Read-back for tests and tools: window.fayFace.live2d (see `readBack` below).
 */
(function () {
  'use strict';

  function loadScript(src) {
    return new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = src;
      s.onload = resolve;
      s.onerror = () => reject(new Error('cannot load ' + src));
      document.head.appendChild(s);
    });
  }

  const FORCE = 3; // pixi-live2d-display MotionPriority.FORCE: a cue replaces the running motion
  const IDLE = 1;  // MotionPriority.IDLE
  const SAMPLES = 400; // mouth read-back history kept for tests (about 7 s at 60 updates/s)

  /* The profile of this model: the one whose `model_file` is the model's file name, else the
   * one without `model_file` (Fay's own conventions). face_map.py has validated them. */
  function profileFor(map, modelUrl) {
    const file = decodeURIComponent(modelUrl.split('/').pop());
    const profiles = (map.live2d && map.live2d.profiles) || {};
    let fallback = null;
    for (const [name, p] of Object.entries(profiles)) {
      if (p.model_file === file) return Object.assign({ name }, p);
      if (!p.model_file && !fallback) fallback = Object.assign({ name }, p);
    }
    return fallback || { name: 'fay', expressions: {}, behaviors: null };
  }

  async function create(container, live2d, map) {
    for (const src of live2d.scripts) await loadScript(src); // in order: core, pixi, plugin
    if (!window.PIXI || !PIXI.live2d || !PIXI.live2d.Live2DModel) {
      throw new Error('the Live2D scripts did not define PIXI.live2d.Live2DModel');
    }
    // The robot has its own voice: the sample motions' sound clips must not play over it.
    PIXI.live2d.config.sound = false;
    const profile = profileFor(map, live2d.model);
    const app = new PIXI.Application({ resizeTo: container, backgroundAlpha: 0, autoStart: true });
    container.appendChild(app.view);
    const model = await PIXI.live2d.Live2DModel.from(live2d.model, { autoInteract: false });
    app.stage.addChild(model);
    const fit = () => {
      const scale = Math.min(container.clientWidth / model.width, container.clientHeight / model.height) * model.scale.x;
      model.scale.set(scale);
      model.x = (container.clientWidth - model.width) / 2;
      model.y = (container.clientHeight - model.height) / 2;
    };
    fit();
    new ResizeObserver(fit).observe(container); // the stage's size settles after the SVG face hides

    const internal = model.internalModel;
    const core = internal.coreModel;
    const cubism2 = typeof core.setParamFloat === 'function';
    const setParam = cubism2 ? (id, v) => core.setParamFloat(id, v) : (id, v) => core.setParameterValueById(id, v);
    const getParam = cubism2 ? (id) => core.getParamFloat(core.getParamIndex(id))
      : (id) => core.getParameterValueById(id);
    const mouthOpen = profile.mouth_open || map.mouth.parameter;
    const form = profile.mouth_form || null;
    const idleGroup = profile.idle_group || map.motion.idle_group;
    internal.motionManager.groups.idle = idleGroup;

    let mouth = 0;
    let formValue = null;     // null: leave the form to the expression and the motion
    const samples = [];       // [{t, value}] each time the applied mouth value changes
    const applied = {};       // parameter id -> value at the last model update
    internal.on('beforeModelUpdate', () => {
      setParam(mouthOpen, mouth);
      if (form && formValue !== null) setParam(form.parameter, formValue);
      const value = getParam(mouthOpen);
      applied[mouthOpen] = value;
      if (form) applied[form.parameter] = getParam(form.parameter);
      const last = samples[samples.length - 1];
      if (!last || last.value !== value) {
        samples.push({ t: Date.now(), value });
        if (samples.length > SAMPLES) samples.shift();
      }
    });

    let lastMotion = '';
    function currentExpression() {
      const em = internal.motionManager.expressionManager;
      if (!em || !em.currentExpression) return '';
      const i = em.expressions.indexOf(em.currentExpression);
      const def = i >= 0 ? em.definitions[i] : null;
      return def ? (def.name || def.Name || '') : '';
    }

    /* What the model itself is doing, read from the runtime: tests compare this with the cue. */
    const readBack = {
      cubism: cubism2 ? 2 : 4,
      profile: profile.name,
      mouthParameter: mouthOpen,
      param(id) { return Object.prototype.hasOwnProperty.call(applied, id) ? applied[id] : getParam(id); },
      mouthSamples() { return samples.slice(); },
      expression: currentExpression,
      motion() {
        const s = internal.motionManager.state;
        return s.currentGroup === undefined ? '' : s.currentGroup + ':' + s.currentIndex;
      },
      lastMotion() { return lastMotion; },
      groups() { return Object.keys(internal.motionManager.definitions); },
      expressions() {
        const em = internal.motionManager.expressionManager;
        return em ? em.definitions.map((d) => d.name || d.Name) : [];
      },
    };

    function motionFor(group, index, behavior, intensity) {
      if (!profile.behaviors) return [group, index];      // Fay's TapBody convention
      const spec = Object.prototype.hasOwnProperty.call(profile.behaviors, behavior)
        ? profile.behaviors[behavior] : profile.default_behavior;
      if (!spec) return null;
      const i = intensity >= map.motion.strong_from_intensity ? spec.indexes[spec.indexes.length - 1] : spec.indexes[0];
      return [spec.group, i];
    }

    return {
      kind: 'live2d',
      readBack,
      setExpression(name) {
        const own = (profile.expressions && profile.expressions[name]) || name;
        model.expression(own);
      },
      /* Returns what the model was asked to play ("group:index"), or '' for none. */
      playMotion(group, index, behavior, intensity) {
        const chosen = motionFor(group, index, behavior, intensity);
        if (!chosen) return '';
        model.motion(chosen[0], chosen[1], FORCE);
        lastMotion = chosen[0] + ':' + chosen[1];
        return lastMotion;
      },
      idle() { model.motion(idleGroup, 0, IDLE); },
      setMouth(value, viseme) {
        mouth = Math.min(1, Math.max(0, Number(value) || 0));
        const v = form && form.visemes ? form.visemes[viseme] : undefined;
        formValue = typeof v === 'number' && mouth > 0 ? v : null;
      },
    };
  }

  window.Live2DFace = { create };
})();
