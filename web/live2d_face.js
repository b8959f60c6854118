/* Live2D renderer, used only when the user runs `fay-ros web --live2d DIR` with their own
 * Cubism Core, renderer (pixi.js 6 + pixi-live2d-display's cubism4 build) and model; none of
 * them ships with fay_ros (web/README.md). It offers the same four calls as SvgFace, so
 * face.js maps cues the same way for both: TapBody motions by index, expressions F01..,
 * ParamMouthOpenY written every frame after the motions (the model must not key it). Eye
 * blink and breathing come from the model's EyeBlink group and the renderer. */
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

  async function create(container, live2d, map) {
    for (const src of live2d.scripts) await loadScript(src); // in order: core, pixi, plugin
    if (!window.PIXI || !PIXI.live2d || !PIXI.live2d.Live2DModel) {
      throw new Error('the Live2D scripts did not define PIXI.live2d.Live2DModel');
    }
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
    window.addEventListener('resize', fit);

    let mouth = 0;
    const parameter = map.mouth.parameter;
    model.internalModel.on('beforeModelUpdate', () => {
      model.internalModel.coreModel.setParameterValueById(parameter, mouth);
    });

    return {
      kind: 'live2d',
      setExpression(name) { model.expression(name); },
      playMotion(group, index) { model.motion(group, index, FORCE); },
      idle() { model.motion(map.motion.idle_group, 0, IDLE); },
      setMouth(value) { mouth = Math.min(1, Math.max(0, Number(value) || 0)); },
    };
  }

  window.Live2DFace = { create };
})();
