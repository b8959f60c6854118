/* The built-in SVG face: draws the expressions and TapBody motions that face_map.json's
 * `svg` section describes, blinks and breathes by itself, and opens its mouth to the value
 * face.js gives it (the same ParamMouthOpenY a Live2D model would get). No licence needed. */
(function () {
  'use strict';

  function clamp(v, lo, hi) { return Math.min(hi, Math.max(lo, Number(v) || 0)); }

  class SvgFace {
    constructor(svg, map, onBlink) {
      this.svg = svg;
      this.map = map;
      this.onBlink = onBlink || function () {};
      this.look = map.svg.expressions[map.expression.default];
      this.mouthOpen = 0;
      this.motionEl = svg.querySelector('#motion');
      const root = document.documentElement.style;
      root.setProperty('--breath-period', map.breathing.period_s + 's');
      root.setProperty('--breath-amp', map.breathing.amplitude_px + 'px');
      this.draw();
      this.scheduleBlink();
    }

    get kind() { return 'svg'; }

    setExpression(name) {
      const look = this.map.svg.expressions[name];
      if (look) { this.look = look; this.draw(); }
    }

    playMotion(group, index) {
      const spec = this.map.svg.motions[String(index)];
      if (!spec) return;
      const el = this.motionEl;
      el.setAttribute('class', '');
      void el.getBoundingClientRect(); // restart the CSS animation even for the same motion
      el.style.setProperty('--amp', spec.amplitude);
      el.setAttribute('class', 'anim-' + spec.animation);
      el.dataset.animation = spec.animation;
    }

    idle() {
      this.motionEl.setAttribute('class', '');
      this.motionEl.dataset.animation = '';
    }

    setMouth(value) {
      const v = clamp(value, 0, 1);
      if (v !== this.mouthOpen) { this.mouthOpen = v; this.drawMouth(); }
    }

    scheduleBlink() {
      const b = this.map.blink;
      const wait = (b.min_interval_s + Math.random() * (b.max_interval_s - b.min_interval_s)) * 1000;
      setTimeout(() => {
        const eyes = this.svg.querySelector('#eyes');
        eyes.classList.add('blink');
        setTimeout(() => { eyes.classList.remove('blink'); this.onBlink(); this.scheduleBlink(); }, b.closed_s * 1000);
      }, wait);
    }

    draw() {
      const l = this.look;
      const raise = -8 * clamp(l.brow_raise, -1, 1);
      const tilt = 6 * clamp(l.brow_tilt, -1, 1); // > 0: inner ends down (serious), < 0: inner ends up (sad)
      this.svg.querySelector('#brow-left').setAttribute('d', `M52 ${84 + raise - tilt} L84 ${84 + raise + tilt}`);
      this.svg.querySelector('#brow-right').setAttribute('d', `M116 ${84 + raise + tilt} L148 ${84 + raise - tilt}`);
      for (const e of this.svg.querySelectorAll('.eye ellipse')) e.setAttribute('ry', (12 * clamp(l.eye_open, 0.05, 1)).toFixed(2));
      for (const c of this.svg.querySelectorAll('.cheek')) c.style.opacity = clamp(l.cheek, 0, 1) * 0.6;
      this.drawMouth();
    }

    drawMouth() {
      const curve = clamp(this.look.mouth_curve, -1, 1);
      const open = this.mouthOpen;
      const cy = 160, half = 22 + 4 * curve;
      const corner = cy - 7 * curve;
      const upper = cy + 5 * curve - 2 * open;
      const lower = cy + 5 * curve + 30 * open;
      const d = `M${100 - half} ${corner.toFixed(1)} Q100 ${upper.toFixed(1)} ${100 + half} ${corner.toFixed(1)} ` +
                `Q100 ${lower.toFixed(1)} ${100 - half} ${corner.toFixed(1)} Z`;
      this.svg.querySelector('#mouth').setAttribute('d', d);
    }
  }

  window.SvgFace = SvgFace;
})();
