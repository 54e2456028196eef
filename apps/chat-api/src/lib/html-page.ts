/**
 * The server's own pages (sign-up, invitations, password reset): plain HTML
 * with one style sheet inline, no script. Every text put in a page goes
 * through {@link escapeHtml} (the `markup` template tag, named so that
 * Prettier leaves its text as written); the style sheet is allowed by its hash in the
 * page's Content-Security-Policy, and nothing else is.
 */
import { createHash } from "node:crypto";
import { escapeHtml } from "./render";

const STYLE = `
:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
body { margin: 0; display: flex; justify-content: center; padding: 2rem 1rem; }
main { width: 100%; max-width: 26rem; }
h1 { font-size: 1.5rem; margin: 0 0 1rem; }
label { display: block; font-weight: 600; margin-top: 1rem; }
input { box-sizing: border-box; width: 100%; font: inherit; padding: 0.5rem; margin-top: 0.25rem; }
button { font: inherit; font-weight: 600; margin-top: 1.5rem; padding: 0.6rem 1.2rem; cursor: pointer; }
.hint { font-size: 0.9rem; opacity: 0.8; margin: 0.25rem 0 0; }
.error { border-left: 4px solid #c62828; padding: 0.5rem 0.75rem; background: rgb(198 40 40 / 0.1); }
code { word-break: break-all; }
`;

/** The Content-Security-Policy of a page: its style sheet, forms to itself, nothing else. */
export const PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`,
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

/** A trusted piece of HTML (built by this module's helpers; text inside it is escaped). */
export interface Html {
  readonly html: string;
}

/** HTML from a template whose `${...}` parts are escaped text, or {@link Html} kept as is. */
export function markup(strings: TemplateStringsArray, ...parts: (string | Html | Html[])[]): Html {
  let out = strings[0] ?? "";
  parts.forEach((part, i) => {
    out += piece(part) + (strings[i + 1] ?? "");
  });
  return { html: out };
}

function piece(part: string | Html | Html[]): string {
  if (typeof part === "string") return escapeHtml(part);
  if (Array.isArray(part)) return part.map((p) => p.html).join("");
  return part.html;
}

/** A whole page: its title (also its heading) and its content. */
export function page(title: string, content: Html): string {
  const head = markup`<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="same-origin"><title>${title}</title><style>${{ html: STYLE }}</style>`;
  return `<!DOCTYPE html><html lang="en"><head>${head.html}</head><body><main>${markup`<h1>${title}</h1>${content}`.html}</main></body></html>`;
}

/** A form field of a page. */
export interface Field {
  name: string;
  label: string;
  type: "text" | "email" | "password";
  autocomplete: string;
  value?: string;
  maxLength?: number;
  minLength?: number;
  hint?: string;
}

/** A form posting to the page itself, with its CSRF token, an error if any, and its fields. */
export function form(options: {
  csrfToken: string;
  fields: readonly Field[];
  submit: string;
  error?: string | undefined;
  intro?: Html;
}): Html {
  const fields = options.fields.map((field) => {
    const id = `field-${field.name}`;
    const hintId = `${id}-hint`;
    const input = `<input id="${id}" name="${escapeHtml(field.name)}" type="${field.type}" autocomplete="${escapeHtml(field.autocomplete)}" required${
      field.value === undefined ? "" : ` value="${escapeHtml(field.value)}"`
    }${field.maxLength === undefined ? "" : ` maxlength="${String(field.maxLength)}"`}${
      field.minLength === undefined ? "" : ` minlength="${String(field.minLength)}"`
    }${field.hint === undefined ? "" : ` aria-describedby="${hintId}"`}>`;
    const hint =
      field.hint === undefined ? [] : markup`<p class="hint" id="${hintId}">${field.hint}</p>`;
    return markup`<label for="${id}">${field.label}</label>${{ html: input }}${hint}`;
  });
  const error =
    options.error === undefined ? [] : markup`<p class="error" role="alert">${options.error}</p>`;
  const token = markup`<input type="hidden" name="csrfmiddlewaretoken" value="${options.csrfToken}">`;
  return markup`${options.intro ?? []}${error}<form method="post">${token}${fields}<button type="submit">${options.submit}</button></form>`;
}

/** A paragraph of escaped text. */
export function paragraph(text: string): Html {
  return markup`<p>${text}</p>`;
}
