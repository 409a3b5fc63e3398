(watch) => {
  // Whatever scrolls can be reached by keyboard (WCAG 2.1.1): a block, table or step view larger
  // than its box, in a direction it scrolls, gets tabindex 0, so Tab reaches it and the arrow keys
  // scroll it. Blocks come and go as the page changes, so it looks again after every change
  // (watch: page_changes.js).
  const SCROLLERS = ".block, .prose table, .attn-scroll";
  const scrolling = (overflow) => ["auto", "scroll"].includes(overflow);
  const scrolls = (element) => {
    const style = getComputedStyle(element);
    return (scrolling(style.overflowX) && element.scrollWidth > element.clientWidth)
      || (scrolling(style.overflowY) && element.scrollHeight > element.clientHeight);
  };
  watch(() => {
    for (const element of document.querySelectorAll(SCROLLERS)) {
      if (!element.hasAttribute("tabindex") && scrolls(element)) element.tabIndex = 0;
    }
  });
}
