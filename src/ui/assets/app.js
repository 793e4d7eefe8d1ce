// Lore dashboard: the one place writes are sent from. Every call carries x-lore-request: 1
// (the gateway refuses writes without it, so a cross-site form cannot make one).
"use strict";
(function () {
  async function api(method, url, body) {
    const init = { method, headers: { "x-lore-request": "1", "accept": "application/json" } };
    if (body !== undefined) {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(url, init);
    let data = null;
    const text = await response.text();
    try { data = text ? JSON.parse(text) : null; } catch (_) { data = { detail: text }; }
    return { ok: response.ok, status: response.status, data };
  }

  function fill(template, data) {
    return template.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(data && data[name] != null ? data[name] : ""));
  }

  function fieldValue(input) {
    const type = input.dataset.type || "";
    if (input.type === "checkbox") return input.checked;
    const raw = input.value;
    if (type === "number") return raw.trim() === "" ? null : Number(raw);
    if (type === "list") return raw.split(/[,\u3001\uff0c]/).map((s) => s.trim()).filter(Boolean);
    if (type === "nullable") return raw.trim() === "" ? null : raw.trim();
    return raw;
  }

  function formBody(form) {
    const body = {};
    for (const input of form.querySelectorAll("[name]")) {
      if (input.disabled || input.dataset.skip === "1") continue;
      body[input.name] = fieldValue(input);
    }
    return body;
  }

  function message(host, text, ok) {
    let box = host.querySelector(":scope > .form-message");
    if (!box) {
      box = document.createElement("div");
      box.className = "form-message";
      host.appendChild(box);
    }
    box.className = "form-message " + (ok ? "form-ok" : "form-error");
    box.textContent = text;
  }

  async function run(element, body) {
    if (element.dataset.confirm && !window.confirm(element.dataset.confirm)) return;
    const result = await api(element.dataset.api, element.dataset.url, body);
    const host = element.tagName === "FORM" ? element : element.parentElement;
    if (!result.ok) {
      // The dashboard's API answers {"error": code, "detail": …}; the cost tracker's
      // {"error": {"type": …, "message": …}}.
      const data = result.data || {};
      const detail = data.detail || (data.error && data.error.message) || "failed (" + result.status + ")";
      message(host, detail, false);
      return;
    }
    const then = element.dataset.then || "";
    if (then === "reload") window.location.reload();
    else if (then.startsWith("/")) window.location.href = fill(then, result.data);
    else message(host, element.dataset.done || "done", true);
  }

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.api) return;
    event.preventDefault();
    run(form, form.dataset.api === "DELETE" ? undefined : formBody(form));
  });

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-api]");
    if (!button || (button.form && button.type === "submit")) return;
    event.preventDefault();
    run(button, button.dataset.body ? JSON.parse(button.dataset.body) : undefined);
  });

  window.lore = { api, formBody, message };
})();
