() => {
  // The page's watchers (reachable.js, figure_text.js) look at the page again whenever it changes:
  // blocks and figures come and go as a user works. One observer calls every watcher once a frame at
  // most, after any change to the page's elements or to the window's size; returns watch(fn), which
  // adds one (and runs it on the next frame). A watcher is given where to look: the document, or, when
  // every change was inside views laid out in containment (CONTAINED, `contain: content` in
  // step_views.css: what changes inside one lays out nothing outside it but its own box), each such view.
  // A step change rewrites the step views and nothing else, so the watchers look there, not at the whole page.
  const CONTAINED = ".attn-step-view, .attn-network";
  const watchers = [];
  let scopes = null;  // where the changes since the last run were: a Set of views, or of the document
  const run = () => {
    const changed = scopes.has(document) ? [document] : [...scopes].filter((view) => view.isConnected);
    scopes = null;
    for (const watcher of watchers) for (const scope of changed) watcher(scope);
  };
  const later = (scope) => {
    if (!scopes) { scopes = new Set(); requestAnimationFrame(run); }
    scopes.add(scope);
  };
  const within = (node) => (node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement)?.closest(CONTAINED);
  new MutationObserver((records) => {
    for (const record of records) later(within(record.target) || document);
  }).observe(document.body, { childList: true, subtree: true });
  window.addEventListener("resize", () => later(document));
  return (watcher) => { watchers.push(watcher); later(document); };
}
