// Keyboard voting for the review page: a key presses the button (or follows the link) marked data-key="<key>".
// One submission per page: after the first, further keys and clicks are ignored, so a double press sends once
// (and the server treats a repeated vote as already cast anyway). While a card is open, its claim is renewed so
// other reviewers keep skipping it.
(function () {
  "use strict";
  var sent = false;

  function press(el) {
    if (sent) return;
    if (el.tagName === "A") { sent = true; window.location.assign(el.href); return; }
    if (el.form) el.form.requestSubmit(el);
  }

  document.addEventListener("submit", function (event) {
    if (sent) { event.preventDefault(); return; }
    sent = true;
    document.body.classList.add("sending");
  }, true);

  window.addEventListener("pageshow", function (event) {
    if (event.persisted) { sent = false; document.body.classList.remove("sending"); }
  });

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    var target = event.target;
    if (target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type !== "checkbox"))) return;
    var key = event.key.toLowerCase();
    var el = document.querySelector('[data-key="' + (window.CSS && CSS.escape ? CSS.escape(key) : key) + '"]');
    if (!el) return;
    event.preventDefault();
    press(el);
  });

  // The queue's counts load after the card, so counting a large queue never delays the next card.
  var counts = document.getElementById("counts");
  if (counts && counts.getAttribute("data-src")) {
    fetch(counts.getAttribute("data-src"), {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (c) {
        if (!c) return;
        var left = document.createElement("b");
        left.textContent = String(c.for_reviewer);
        counts.textContent = "";
        counts.appendChild(left);
        counts.appendChild(document.createTextNode(" left for you · " + c.awaiting + " awaiting a person (" +
          c.routed + " routed by the machines)"));
      }).catch(function () {});
  }

  var body = document.body;
  var lease = parseInt(body.getAttribute("data-lease-ms") || "0", 10);
  var card = body.getAttribute("data-card");
  if (lease > 0 && card) {
    setInterval(function () {
      if (document.hidden || sent) return;
      fetch("/card/" + card + "/claim", {
        method: "POST", credentials: "same-origin",
        headers: {"Content-Type": "application/x-www-form-urlencoded"},
        body: "csrf=" + encodeURIComponent(body.getAttribute("data-csrf") || "")
      }).catch(function () {});
    }, Math.max(5000, lease / 3));
  }
})();
