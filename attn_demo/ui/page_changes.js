() => {
  // The page's watchers (reachable.js, figure_text.js) look at the page again whenever it changes:
  // blocks and figures come and go as a user works. One observer calls every watcher once a frame at
  // most, after any change to the page's elements or to the window's size; returns watch(fn), which
  // adds one (and runs it on the next frame).
  const watchers = [];
  let pending = false;
  const run = () => { pending = false; for (const watcher of watchers) watcher(); };
  const later = () => { if (!pending) { pending = true; requestAnimationFrame(run); } };
  new MutationObserver(later).observe(document.body, { childList: true, subtree: true });
  window.addEventListener("resize", later);
  return (watcher) => { watchers.push(watcher); later(); };
}
