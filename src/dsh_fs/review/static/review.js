// dsh-fs review: the page's only script (part of dsh-fs; same licence). It loads diffs a
// chunk at a time, sends the actions (POST, JSON, the token in a header) and keeps the page
// current by polling the journal's version. HTML it inserts comes from the server, which
// escapes every file name, label and line; anything else it shows goes in as text.
"use strict";
(() => {
  const token = document.querySelector('meta[name="dsh-fs-token"]').content;
  const headers = { "X-Dsh-Fs-Token": token };
  const statusBox = document.getElementById("status");
  const POLL_MS = 1500;
  // The session rows' HTML as the page holds them (serialized by the browser: the page's
  // own at first). A refresh replaces them only when what it brought serializes otherwise:
  // the first refresh after a page load then leaves the rows the server rendered alone,
  // and a link being clicked at that moment is not swapped from under the pointer.
  const listed = document.getElementById("sessions-body");
  let shownRows = listed ? listed.innerHTML : null;

  function serialized(html) {
    const parsed = document.createElement("template");
    parsed.innerHTML = html;
    return parsed.innerHTML;
  }

  function say(text, kind) {
    statusBox.textContent = text;
    statusBox.className = kind || "";
  }

  async function getJSON(path, params) {
    const url = path + "?" + new URLSearchParams(params).toString();
    const response = await fetch(url, { headers, cache: "no-store" });
    const body = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) throw new Error(body.error || String(response.status));
    return body;
  }

  async function getHTML(path, params) {
    const url = path + "?" + new URLSearchParams(params).toString();
    const response = await fetch(url, { headers, cache: "no-store" });
    if (!response.ok) throw new Error(String(response.status));
    return response.text();
  }

  // Diffs: the first chunk when shown, each next one when its button is pressed or scrolls
  // into view, so a 1 MB change never lands on the page at once.
  const watcher = "IntersectionObserver" in window
    ? new IntersectionObserver((seen) => {
      for (const item of seen) {
        if (item.isIntersecting) loadMore(item.target);
      }
    }, { rootMargin: "400px" })
    : null;

  async function loadChunk(box, store, id, chunk) {
    const data = await getJSON("/api/diff", { store, id, chunk });
    let table = box.querySelector("table.difftab");
    if (!table) {
      box.textContent = "";
      const names = document.createElement("p");
      names.className = "names";
      names.textContent = `--- ${data.old}  +++ ${data.new}  (${data.hunks} hunk${data.hunks === 1 ? "" : "s"})`;
      table = document.createElement("table");
      table.className = "difftab";
      box.append(names, table);
    }
    table.insertAdjacentHTML("beforeend", data.html);
    const more = table.querySelector("button.more");
    if (more && watcher) watcher.observe(more);
  }

  async function loadMore(button) {
    if (button.dataset.loading) return;
    button.dataset.loading = "1";
    if (watcher) watcher.unobserve(button);
    const body = button.closest("tbody");
    const box = button.closest("div.diff");
    try {
      await loadChunk(box, button.dataset.store, button.dataset.id, button.dataset.chunk);
      body.remove();
    } catch (error) {
      delete button.dataset.loading;
      say(`Could not load more of the diff: ${error.message}`, "refused");
    }
  }

  async function toggle(button) {
    const box = document.getElementById(button.getAttribute("aria-controls"));
    const open = button.getAttribute("aria-expanded") === "true";
    button.setAttribute("aria-expanded", String(!open));
    button.textContent = open ? "Show diff" : "Hide diff";
    box.hidden = open;
    if (!open && !box.dataset.loaded) {
      box.dataset.loaded = "1";
      box.textContent = "Loading…";
      try {
        await loadChunk(box, button.dataset.store, button.dataset.id, 0);
      } catch (error) {
        delete box.dataset.loaded;
        box.textContent = `Could not load the diff: ${error.message}`;
      }
    }
  }

  async function act(button) {
    const payload = { action: button.dataset.action, store: Number(button.dataset.store) };
    if (button.dataset.label !== undefined) payload.label = button.dataset.label;
    if (button.dataset.id !== undefined) payload.id = button.dataset.id;
    if (button.dataset.hunk !== undefined) payload.hunk = Number(button.dataset.hunk);
    const pendingBox = button.closest("article.pending");
    if (pendingBox) payload.note = pendingBox.querySelector(".approval-note").value;
    button.disabled = true;
    say("Working…");
    try {
      const response = await fetch("/api/action", {
        method: "POST",
        headers: { ...headers, "Content-Type": "application/json" },
        body: JSON.stringify(payload),
        cache: "no-store",
      });
      const data = await response.json().catch(() => ({ error: response.statusText }));
      if (!response.ok) {
        say(`Refused: ${data.error || response.status}`, "refused");
      } else {
        const answer = payload.action === "approve" || payload.action === "reject";
        const refused = answer
          ? data.message.startsWith("Refused")
          : data.results.some((r) => r.result === "refused") || data.results.length === 0;
        say(data.message, refused ? "refused" : "done");
      }
    } catch (error) {
      say(`The action did not reach dsh-fs review: ${error.message}`, "refused");
    } finally {
      button.disabled = false;
    }
    await refresh(true);
  }

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button) return;
    if (button.classList.contains("toggle")) toggle(button);
    else if (button.classList.contains("more")) loadMore(button);
    else if (button.dataset.action) act(button);
  });

  // Live: the version changes whenever a store does; then the list or the session's
  // changes are fetched again. Open diffs stay open: only the head of a known change is
  // replaced, and a new change is added at the end.
  let version = null;
  let busy = false;
  let again = false; // a forced refresh asked for while another ran
  const live = document.getElementById("live");

  async function refresh(force) {
    // One refresh at a time. A forced one (after an action) asked for while a poll runs is
    // not dropped: that poll may have read the version before the action changed it, so it
    // runs once more as soon as the poll ends and the action's result shows at once.
    if (busy) {
      again = again || force;
      return;
    }
    busy = true;
    try {
      const data = await getJSON("/api/version", {});
      // The first poll updates too: a change (or a pending approval) that came between the
      // page's rendering and this poll is in its version already, and would otherwise wait
      // for the next change to show.
      if (version === null || force || data.version !== version) await update();
      version = data.version;
      live.textContent = "live";
      live.className = "live";
    } catch (error) {
      live.textContent = "not connected";
      live.className = "live off";
    } finally {
      busy = false;
    }
    if (again) {
      again = false;
      await refresh(true);
    }
  }

  async function updatePending() {
    const pending = document.getElementById("pending");
    if (!pending) return;
    const fresh = document.createElement("section");
    fresh.innerHTML = await getHTML("/fragment/pending", {});
    // Merged by id, never replaced whole: a proposal still waiting keeps its element, so a
    // note being typed into it (and the focus) survives another proposal coming or going.
    // Only the heading (its count) and the entries that came or went change.
    const kept = new Map();
    for (const entry of pending.querySelectorAll(":scope > article.pending")) kept.set(entry.id, entry);
    const wanted = [];
    for (const node of Array.from(fresh.children)) {
      const known = node.matches("article.pending") ? kept.get(node.id) : null;
      if (known) kept.delete(node.id);
      wanted.push(known || node);
    }
    for (const gone of kept.values()) gone.remove();
    for (const node of Array.from(pending.children)) {
      if (!node.matches("article.pending")) node.remove();
    }
    // Placed in the server's order by moving only what is out of place: the entries still
    // waiting keep their order, so the one holding the focus is not moved (that would blur
    // it); the heading and the new entries go in around it.
    let at = 0;
    for (const node of wanted) {
      if (pending.children[at] !== node) pending.insertBefore(node, pending.children[at] || null);
      at += 1;
    }
  }

  async function update() {
    await updatePending();
    const rows = document.getElementById("sessions-body");
    if (rows) {
      const page = rows.closest("table").dataset.page;
      const data = await getJSON("/fragment/list", { page });
      // Rows replaced only when they changed, and the focus looked up after the wait: a
      // keyboard user who tabbed onto a row while the list was fetched keeps their place
      // (the row's same link or button), instead of finding the focus back on the page.
      if (serialized(data.rows) !== shownRows) {
        const focused = document.activeElement;
        const row = focused && rows.contains(focused) ? focused.closest("tr") : null;
        const key = row && row.dataset.key;
        const at = row ? Array.from(row.querySelectorAll("a, button")).indexOf(focused) : -1;
        rows.innerHTML = data.rows;
        shownRows = rows.innerHTML;
        for (const fresh of key ? rows.querySelectorAll("tr") : []) {
          if (fresh.dataset.key !== key) continue;
          const targets = fresh.querySelectorAll("a, button");
          const target = targets[Math.max(at, 0)] || targets[0];
          if (target) target.focus();
        }
      }
      // More sessions make more pages; the damaged records come and go with the stores.
      const pages = document.getElementById("pages");
      if (pages && pages.innerHTML !== data.pages) pages.innerHTML = data.pages;
      rows.closest("table").dataset.page = String(data.page);
      replaceDamaged(data.damaged);
      return;
    }
    const list = document.getElementById("changes");
    if (!list) return;
    const data = await getJSON("/fragment/changes", { store: list.dataset.store, label: list.dataset.label });
    document.getElementById("session-facts").innerHTML = data.facts;
    replaceDamaged(data.damaged);
    const fresh = document.createElement("ol");
    fresh.innerHTML = data.items;
    merge(list, fresh);
  }

  // The changes of `fresh` into `list`: a new one added at the end, a known one's head
  // replaced; a change set's files likewise (a set grows while its call runs).
  function merge(list, fresh) {
    for (const item of Array.from(fresh.children)) {
      const known = item.id ? document.getElementById(item.id) : null;
      if (!known) {
        list.append(item);
        continue;
      }
      known.className = item.className;
      const head = item.querySelector(":scope > .change-head");
      const oldHead = known.querySelector(":scope > .change-head");
      if (head && oldHead && head.innerHTML !== oldHead.innerHTML) oldHead.replaceWith(head);
      const files = item.querySelector(":scope > ol.set-files");
      const oldFiles = known.querySelector(":scope > ol.set-files");
      if (files && oldFiles) merge(oldFiles, files);
    }
  }

  function replaceDamaged(html) {
    const damaged = document.getElementById("damaged");
    if (damaged && damaged.outerHTML !== html) damaged.outerHTML = html;
  }

  refresh(false);
  setInterval(() => refresh(false), POLL_MS);
})();
