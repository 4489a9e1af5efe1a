// Applied before the page paints, so a dark-mode user never sees a white flash.
(function () {
  var saved = null;
  try { saved = localStorage.getItem("dynastore.theme"); } catch (e) { /* private mode */ }
  var dark = saved ? saved === "dark" : window.matchMedia("(prefers-color-scheme: dark)").matches;
  document.documentElement.dataset.theme = dark ? "dark" : "light";
})();
