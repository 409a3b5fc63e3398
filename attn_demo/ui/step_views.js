() => {
  // Decoder steps drawn in the browser, from the payload the server sends once per translation
  // (TranslateSection.step_data in translate.py, built by attn_demo.figures.step_views): moving through the steps needs no
  // round trip. A step's figure is the shared template with that step's values merged in, exactly
  // as attn_demo.figures.merge_step does it; tests/test_browser.py checks that the page draws the
  // numbers the server's own step_figure would.

  const PLAY_INTERVAL_MS = 1000;

  // A plotly.js typed array {dtype: "f4", bdata: base64} as a Float32Array, and back.
  const floats = (typed) => new Float32Array(Uint8Array.from(atob(typed.bdata), (c) => c.charCodeAt(0)).buffer);
  function typed(array, shape) {
    const bytes = new Uint8Array(array.buffer);
    let binary = "";
    for (let i = 0; i < bytes.length; i += 8192) binary += String.fromCharCode(...bytes.subarray(i, i + 8192));
    return { dtype: "f4", bdata: btoa(binary), shape: shape.join(", ") };
  }

  // Panel 4, as figures.weighted_annotations: the rows α_tj·h_j, then the model's c_t. A Float32Array
  // rounds each product exactly as numpy's float32 multiplication does.
  function weightedAnnotations(weights, annotations, context) {
    const alpha = floats(weights), h = floats(annotations), c = floats(context);
    const S = alpha.length, D = c.length;
    const z = new Float32Array((S + 1) * D);
    alpha.forEach((a, j) => { for (let d = 0; d < D; d++) z[j * D + d] = a * h[j * D + d]; });
    z.set(c, S * D);
    const bound = z.reduce((max, v) => Math.max(max, Math.abs(v)), 0) || 1;
    return { z: typed(z, [S + 1, D]), zmin: -bound, zmax: bound };
  }

  function stepFigure(model, t) {
    const step = model.steps[Math.min(t, model.steps.length) - 1];  // a model that stopped shows its last step
    const data = model.template.data.map((trace, i) => ({ ...trace, ...step.data[i] }));
    Object.assign(data[3], weightedAnnotations(step.weights, model.annotations, step.context));
    return { data, layout: { ...model.template.layout, ...step.layout } };
  }

  window.attnSteps = {
    // Both models at output step t (1-based): [figure, caption, figure, caption] as gr.Plot and gr.Markdown values.
    show(views, t) {
      if (!views) return [null, "", null, ""];
      return ["bahdanau", "luong"].flatMap((name) => [
        { type: "plotly", plot: JSON.stringify(stepFigure(views[name], t)) },
        views[name].captions[t - 1],
      ]);
    },
    // One step back or forward, kept within the translation: [t, ...show(views, t)].
    move(views, t, delta) {
      if (!views) return [1, null, "", null, ""];
      const next = Math.max(1, Math.min(views.steps, t + delta));
      return [next, ...this.show(views, next)];
    },
    // Play, for a projector: one step a second through "Next step" until the last step; a second
    // press stops. Starts again from step 1 when pressed at the last step. Returns move()'s values.
    timer: null,
    play(views, t) {
      if (this.timer !== null || !views) {
        this.stopPlaying();
        return this.move(views, t, 0);
      }
      const start = t >= views.steps ? 1 : t;
      document.querySelector("#play-steps").textContent = "⏸ Stop";
      this.timer = setInterval(() => {
        const slider = document.querySelector("#step-slider input[type=range]");
        if (Number(slider.value) >= Number(slider.max)) this.stopPlaying();
        else document.querySelector("#next-step").click();
      }, PLAY_INTERVAL_MS);
      return this.move(views, start, 0);
    },
    stopPlaying() {
      clearInterval(this.timer);
      this.timer = null;
      document.querySelector("#play-steps").textContent = "▶ Play";
    },
  };
}
