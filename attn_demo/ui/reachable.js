() => {
  // Whatever scrolls can be reached by keyboard (WCAG 2.1.1): a block, table or step view larger
  // than its box, in a direction it scrolls, gets tabindex 0, so Tab reaches it and the arrow keys
  // scroll it. Blocks come and go as the page changes, so it looks again after every change, at
  // most once a frame.
  const SCROLLERS = ".block, .prose table, .attn-scroll";
  const scrolling = (overflow) => ["auto", "scroll"].includes(overflow);
  const scrolls = (element) => {
    const style = getComputedStyle(element);
    return (scrolling(style.overflowX) && element.scrollWidth > element.clientWidth)
      || (scrolling(style.overflowY) && element.scrollHeight > element.clientHeight);
  };
  let pending = false;
  const mark = () => {
    pending = false;
    for (const element of document.querySelectorAll(SCROLLERS)) {
      if (!element.hasAttribute("tabindex") && scrolls(element)) element.tabIndex = 0;
    }
  };
  const later = () => { if (!pending) { pending = true; requestAnimationFrame(mark); } };
  new MutationObserver(later).observe(document.body, { childList: true, subtree: true });
  window.addEventListener("resize", later);
  later();
}
