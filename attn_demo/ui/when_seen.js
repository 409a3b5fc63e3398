// A section's watcher (attn_demo/ui/when_seen.py): clicks itself once, when any part of its section (the column
// it sits in) comes within one screen of the window, so the section draws its figures then and not with the page.
// The whole section counts, not the watcher's place at its top: a reader who jumps to a figure far below that top
// (on a phone, a long table above a chart) is near the section without being near its top. Until then each
// figure's box keeps the figure's height (props.reserve: pixels by element id) and is marked props.reserved_class,
// which the page's style keeps drawn, so nothing below it moves when it appears, under a reader's eyes or a finger
// about to tap. While the page is still being laid out everything sits near the top, so nearness counts at
// once only after the reader has scrolled (a shared link that opens on a section scrolls too), and otherwise
// once it has lasted two seconds.
// `element`, `props` and `trigger` are Gradio's (gr.HTML's js_on_load): this watcher's own element, its
// props, and what sends its events to the server.
const reserve = () => Object.entries(props.reserve).every(([id, height]) => {
  const box = document.getElementById(id);
  if (box) {
    const style = getComputedStyle(box);
    const edges = ["paddingTop", "paddingBottom", "borderTopWidth", "borderBottomWidth"].reduce((sum, side) => sum + parseFloat(style[side]), 0);
    box.classList.add(props.reserved_class);
    box.style.minHeight = `${height + edges}px`;
  }
  return box !== null;
});
let frames = 0;
const reserveWhenThere = () => { if (!reserve() && ++frames < 120) requestAnimationFrame(reserveWhenThere); };
reserveWhenThere();

// near: the section within SCREENS screens of the window, the observer's margin; read from the layout itself
// when it fires (an observer's report can arrive late)
const SCREENS = 1;
const section = element.closest(".column");  // Gradio's gr.Column: the section the watcher sits in
const near = () => {
  const box = section.getBoundingClientRect();
  return box.top < (1 + SCREENS) * window.innerHeight && box.bottom > -SCREENS * window.innerHeight;
};
let scrolled = window.scrollY > 0;
let timer = null;
const fire = () => {
  seen.disconnect();
  window.removeEventListener("scroll", onScroll);
  clearTimeout(timer);
  trigger("click");
};
const onScroll = () => {
  scrolled = true;
  if (near()) fire();
};
const seen = new IntersectionObserver((entries) => {
  clearTimeout(timer);
  if (!entries.some((entry) => entry.isIntersecting)) return;
  if (scrolled) fire();
  else timer = setTimeout(() => { if (near()) fire(); }, 2000);
}, { rootMargin: `${100 * SCREENS}% 0px` });
seen.observe(section);
window.addEventListener("scroll", onScroll, { passive: true });
