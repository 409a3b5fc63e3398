(watch) => {
  // Whatever scrolls can be reached by keyboard (WCAG 2.1.1): a block, table or step view larger
  // than its box, in a direction it scrolls, gets tabindex 0, so Tab reaches it and the arrow keys
  // scroll it. Blocks come and go as the page changes, so it looks again after every change, where
  // the change was (watch: page_changes.js).
  const SCROLLERS = ".block, .prose table, .attn-scroll";
  const scrolling = (overflow) => ["auto", "scroll"].includes(overflow);
  // sizes first (reading them lays the page out, as its next frame would anyway), a style only where one overflows
  const scrolls = (element) => (element.scrollWidth > element.clientWidth && scrolling(getComputedStyle(element).overflowX))
    || (element.scrollHeight > element.clientHeight && scrolling(getComputedStyle(element).overflowY));
  // where a change was (page_changes.js): the scrollers inside it, and around it those its size may have overflowed
  const around = function* (scope) {
    yield* scope.querySelectorAll(SCROLLERS);
    for (let element = scope.parentElement?.closest(SCROLLERS); element; element = element.parentElement?.closest(SCROLLERS)) {
      yield element;
    }
  };
  watch((scope) => {
    for (const element of around(scope)) {
      if (!element.hasAttribute("tabindex") && scrolls(element)) element.tabIndex = 0;
    }
  });
}
