// A section's watcher (attn_demo/ui/when_seen.py): clicks itself once, when it comes within one screen of
// the window, so its section draws its figures then and not with the page. While the page is still being
// laid out everything sits near the top, so nearness counts at once only after the reader has scrolled
// (a shared link that opens on a section scrolls too), and otherwise once it has lasted two seconds.
// `element` is this watcher's own element; `trigger` sends its events to the server (gr.HTML's js_on_load).
let near = false;
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
  if (near) fire();
};
const seen = new IntersectionObserver((entries) => {
  near = entries.some((entry) => entry.isIntersecting);
  clearTimeout(timer);
  if (near && scrolled) fire();
  else if (near) timer = setTimeout(fire, 2000);
}, { rootMargin: "100% 0px" });
seen.observe(element);
window.addEventListener("scroll", onScroll, { passive: true });
