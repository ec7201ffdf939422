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

  // The team page's upload form: sent with fetch, so a refusal (413, 422, 429, ...) is shown in
  // the page's banner in words while the chosen problem, mode and files stay as they were; and
  // Submit waits out the chosen mode's minimum interval with a countdown.
  function uploadForm(form) {
    var button = form.querySelector("button[type=submit]");
    var mode = form.querySelector("#mode");
    var label = button.textContent;
    var readyAt = {};
    var started = Date.now();
    if (mode) Array.prototype.forEach.call(mode.options, function (o) {
      readyAt[o.value] = started + 1000 * parseInt(o.getAttribute("data-wait-s") || "0", 10);
    });
    function tick() {
      var at = mode ? readyAt[mode.value] || 0 : 0;
      var left = Math.ceil((at - Date.now()) / 1000);
      if (left > 0) {
        button.disabled = true;
        button.textContent = "Wait " + left + " s";
        setTimeout(tick, 250);
      } else if (!form.classList.contains("sending")) {
        button.disabled = false;
        button.textContent = label;
      }
    }
    function banner(message) {
      var box = document.getElementById("upload-error");
      if (!box) {
        box = document.createElement("div");
        box.id = "upload-error";
        box.className = "banner error";
        box.setAttribute("role", "alert");
        form.parentNode.insertBefore(box, form);
      }
      box.textContent = "Not submitted. " + message;
    }
    function refusal(res) {
      var wait = parseInt(res.headers.get("Retry-After") || "0", 10);
      if (wait > 0 && mode) { readyAt[mode.value] = Date.now() + 1000 * wait; tick(); }
      var type = res.headers.get("Content-Type") || "";
      return res.text().then(function (text) {
        if (type.indexOf("json") >= 0) {
          try { var body = JSON.parse(text); return String(body.detail || text); } catch (e) { return text; }
        }
        var doc = new DOMParser().parseFromString(text, "text/html");
        var shown = doc.querySelector(".banner.error div") || doc.querySelector("main p");
        return shown ? shown.textContent.replace(/^\s*Not submitted\.\s*/, "") : "the server answered " + res.status;
      });
    }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      form.classList.add("sending");
      button.disabled = true;
      fetch(form.action, { method: "POST", body: new FormData(form), credentials: "same-origin" })
        .then(function (res) {
          if (res.ok && res.redirected) { window.location.assign(res.url); return null; }
          return refusal(res).then(function (message) { banner(message + " [HTTP " + res.status + "]"); });
        })
        .catch(function () { banner("the server could not be reached; try again"); })
        .then(function () { form.classList.remove("sending"); tick(); });
    });
    if (mode) mode.addEventListener("change", tick);
    // The file picker offers the chosen backend's file types (its data-accept: the upload's and the
    // policy's one list), so a file the judge would refuse is not offered.
    var backend = form.querySelector("#backend"), files = form.querySelector("#files");
    function accept() {
      var chosen = backend && backend.options[backend.selectedIndex];
      if (chosen && files && chosen.getAttribute("data-accept")) files.setAttribute("accept", chosen.getAttribute("data-accept"));
    }
    if (backend) { backend.addEventListener("change", accept); accept(); }
    // The terminal command under the form names what the form has chosen.
    ["problem", "backend", "mode"].forEach(function (name) {
      var select = form.querySelector("#" + name), shown = form.querySelector('[data-hint="' + name + '"]');
      if (!select || !shown) return;
      var follow = function () { shown.textContent = select.value; };
      select.addEventListener("change", follow);
      follow();
    });
    tick();
  }

  document.addEventListener("DOMContentLoaded", function () {
    localTimes(document);
    confirmForms();
    var upload = document.getElementById("submit-form");
    if (upload) uploadForm(upload);
    var board = document.querySelector("#board[data-rows-url]");
    if (board) liveBoard(board);
    var timeline = document.querySelector("#timeline[data-live-url]");
    if (timeline) liveTimeline(timeline);
  });
})();
