// The card editor: save with the file's mtime (a conflicting edit shows both versions), archive,
// try a sentence (what fires and why; unused names as one-click keywords), import a lorebook.
"use strict";
(function () {
  const { api, message } = window.lore;
  const form = document.getElementById("card-form");
  let dirty = false;

  function list(value) {
    return value.split(/[,\u3001\uff0c]/).map((s) => s.trim()).filter(Boolean);
  }

  function cardBody() {
    const get = (name) => form.querySelector('[name="' + name + '"]');
    const body = {
      title: get("title").value,
      keywords: list(get("keywords").value),
      aliases: list(get("aliases").value),
      refs: list(get("refs").value),
      secondary: {
        all: list(get("sec_all").value),
        any: list(get("sec_any").value),
        not: list(get("sec_not").value),
        not_all: list(get("sec_not_all").value),
      },
      scan_depth: get("scan_depth").value.trim() === "" ? null : Number(get("scan_depth").value),
      priority: get("priority").value.trim() === "" ? 0 : Number(get("priority").value),
      enabled: get("enabled").checked,
      inject: get("inject").checked,
      fields: {},
    };
    for (const area of form.querySelectorAll("textarea[data-field]")) {
      body.fields[area.dataset.field] = area.value;
    }
    return body;
  }

  function showConflict(current, body) {
    const panel = document.getElementById("conflict");
    panel.classList.remove("hidden");
    document.getElementById("conflict-theirs").textContent = current ? current.text : "(the card is gone)";
    document.getElementById("conflict-yours").textContent = JSON.stringify(body, null, 2);
    document.getElementById("conflict-overwrite").onclick = () => save(current ? current.mtime : "");
    document.getElementById("conflict-load").onclick = () => { dirty = false; window.location.reload(); };
  }

  async function save(mtime) {
    const body = cardBody();
    let result;
    if (form.dataset.mode === "create") {
      body.kind = form.querySelector('[name="kind"]').value;
      body.key = form.querySelector('[name="key"]').value;
      result = await api("POST", "/api/v1/cards", body);
    } else {
      body.mtime = mtime;
      result = await api("PUT", "/api/v1/cards/" + encodeURIComponent(form.dataset.kind) + "/" + encodeURIComponent(form.dataset.key), body);
    }
    if (result.status === 409 && result.data && result.data.error === "conflict") {
      showConflict(result.data.current, body);
      message(form, result.data.detail, false);
      return;
    }
    if (!result.ok) {
      message(form, (result.data && result.data.detail) || "save failed", false);
      return;
    }
    dirty = false;
    window.location.href = "/ui/cards/" + encodeURIComponent(result.data.kind) + "/" + encodeURIComponent(result.data.key) + "?saved=1";
  }

  if (form) {
    form.addEventListener("input", () => { dirty = true; });
    form.addEventListener("submit", (event) => { event.preventDefault(); save(form.dataset.mtime || ""); });
    const archive = document.getElementById("card-archive");
    if (archive) {
      archive.addEventListener("click", async () => {
        if (!window.confirm("Move this card to the archive?")) return;
        const result = await api("DELETE", "/api/v1/cards/" + encodeURIComponent(form.dataset.kind) + "/" + encodeURIComponent(form.dataset.key));
        if (!result.ok) { message(form, result.data.detail, false); return; }
        dirty = false;
        window.location.href = "/ui/cards?kind=" + encodeURIComponent(form.dataset.kind) + "&archived=1";
      });
    }
    window.addEventListener("beforeunload", (event) => { if (dirty) { event.preventDefault(); event.returnValue = ""; } });
  }

  function line(parent, text, className) {
    const div = document.createElement("div");
    if (className) div.className = className;
    div.textContent = text;
    parent.appendChild(div);
    return div;
  }

  const tryForm = document.getElementById("try-form");
  if (tryForm) {
    tryForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const out = document.getElementById("try-result");
      out.textContent = "";
      const result = await api("POST", "/api/v1/cards/try", { text: tryForm.querySelector('[name="text"]').value });
      if (!result.ok) { line(out, result.data.detail, "form-error"); return; }
      const r = result.data;
      if (!r.fired.length && !r.dropped.length) line(out, "No card matches.", "muted");
      for (const card of r.fired) {
        line(out, "+ " + card.title + " [" + card.kind + "]  score " + card.score + ", " + card.tokens + " tokens; hit: " + card.hit_terms.join(", "), "try-hit fired");
      }
      for (const card of r.dropped) {
        line(out, "- " + card.title + "  not injected: " + card.reason.replace(/_/g, " ") + (card.detail ? " (" + card.detail + ")" : ""), "try-hit dropped muted");
      }
      if (r.fired.length) line(out, r.tokens_used + " of " + r.budget_tokens + " tokens", "muted small");
      if (r.candidates.length) {
        const row = line(out, "Names without a card: ", "candidates");
        for (const name of r.candidates) {
          const pill = document.createElement("button");
          pill.type = "button";
          pill.className = "pill";
          pill.textContent = "+ " + name;
          pill.title = form ? "add to this card's keywords" : "open a card to add keywords";
          pill.addEventListener("click", () => {
            const keywords = form && form.querySelector('[name="keywords"]');
            if (!keywords) { window.location.href = "/ui/cards/new?keyword=" + encodeURIComponent(name); return; }
            const current = list(keywords.value);
            if (!current.includes(name)) current.push(name);
            keywords.value = current.join(", ");
            dirty = true;
            pill.disabled = true;
          });
          row.appendChild(pill);
        }
      }
    });
  }

  const importButton = document.getElementById("import-run");
  if (importButton) {
    importButton.addEventListener("click", async () => {
      const host = importButton.parentElement;
      const file = document.getElementById("import-file").files[0];
      if (!file) { message(host, "choose a lorebook JSON file first", false); return; }
      let book;
      try { book = JSON.parse(await file.text()); } catch (err) { message(host, "not JSON: " + err.message, false); return; }
      const body = { book, kind: document.getElementById("import-kind").value, force: document.getElementById("import-force").checked };
      const result = await api("POST", "/api/v1/cards/import", body);
      if (!result.ok) { message(host, result.data.detail, false); return; }
      message(host, result.data.written.length + " written, " + result.data.kept.length + " kept, " + result.data.skipped.length + " skipped", true);
    });
  }
})();
