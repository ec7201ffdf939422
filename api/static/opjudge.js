// opjudge pages: live updates by polling server-rendered fragments (no framework, no build step).
//
// - A live board (#board[data-rows-url]) asks for its rows with the version it shows; the
//   server answers 204 while nothing changed, else the new fragment. Rows whose content
//   changed flash (class "changed").
// - A running submission's timeline (#timeline[data-live-url]) is refreshed the same way;
//   when the run is over the page reloads once to show the results.
// - <time data-local> elements are shown in the reader's time zone.
"use strict";

(function () {
  function localTimes(root) {
    root.querySelectorAll("time[data-local]").forEach(function (el) {
      var when = new Date(el.getAttribute("datetime"));
      if (isNaN(when)) return;
      var style = el.getAttribute("data-local");
      var opts = style === "date"
        ? { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" }
        : style === "seconds"
          ? { hour: "2-digit", minute: "2-digit", second: "2-digit" }
          : { hour: "2-digit", minute: "2-digit" };
      el.textContent = when.toLocaleString([], opts);
      el.title = when.toString();
    });
  }

  function fragment(html, id) {
    var tpl = document.createElement("template");
    tpl.innerHTML = html.trim();
    return tpl.content.querySelector("#" + id);
  }

  function withParam(url, key, value) {
    return url + (url.indexOf("?") >= 0 ? "&" : "?") + key + "=" + encodeURIComponent(value);
  }

  function rowSignatures(root) {
    var sigs = {};
    root.querySelectorAll("tr[data-row]").forEach(function (tr) { sigs[tr.getAttribute("data-row")] = tr.getAttribute("data-sig"); });
    return sigs;
  }

  function liveBoard(board) {
    var url = board.getAttribute("data-rows-url");
    var every = Number(board.getAttribute("data-poll-ms")) || 3000;
    var dot = document.getElementById("live-dot");
    function poll() {
      fetch(withParam(url, "v", board.getAttribute("data-version")), { cache: "no-store", credentials: "same-origin" })
        .then(function (res) {
          if (dot) dot.classList.toggle("stale", !res.ok);
          if (res.status !== 200) return null;
          return res.text();
        })
        .then(function (html) {
          if (!html) return;
          var fresh = fragment(html, "board");
          if (!fresh) return;
          var before = rowSignatures(board);
          board.innerHTML = fresh.innerHTML;
          board.setAttribute("data-version", fresh.getAttribute("data-version"));
          board.querySelectorAll("tr[data-row]").forEach(function (tr) {
            var key = tr.getAttribute("data-row");
            if (before[key] !== tr.getAttribute("data-sig")) tr.classList.add("changed");
          });
          localTimes(board);
        })
        .catch(function () { if (dot) dot.classList.add("stale"); })
        .then(function () { setTimeout(poll, every); });
    }
    setTimeout(poll, every);
  }

  function liveTimeline(timeline) {
    var url = timeline.getAttribute("data-live-url");
    var every = Number(timeline.getAttribute("data-poll-ms")) || 1500;
    function poll() {
      fetch(url, { cache: "no-store", credentials: "same-origin" })
        .then(function (res) { return res.status === 200 ? res.text() : null; })
        .then(function (html) {
          var fresh = html && fragment(html, "timeline");
          if (!fresh) { setTimeout(poll, every * 2); return; }
          timeline.innerHTML = fresh.innerHTML;
          localTimes(timeline);
          if (fresh.getAttribute("data-done") === "1") { window.location.reload(); return; }
          setTimeout(poll, every);
        })
        .catch(function () { setTimeout(poll, every * 2); });
    }
    setTimeout(poll, every);
  }

  function confirmForms() {
    document.querySelectorAll("form[data-confirm]").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        if (!window.confirm(form.getAttribute("data-confirm"))) event.preventDefault();
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    localTimes(document);
    confirmForms();
    var board = document.querySelector("#board[data-rows-url]");
    if (board) liveBoard(board);
    var timeline = document.querySelector("#timeline[data-live-url]");
    if (timeline) liveTimeline(timeline);
  });
})();
