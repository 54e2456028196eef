/**
 * Which mail domains an address may sign up from: throwaway providers (the
 * `disposable-email-domains` list, the one Zulip's check comes from; 120,000
 * names, read on the first check, not at start), and a realm's own domains.
 */
import { createRequire } from "node:module";

let disposable: Set<string> | undefined;

/** Whether `domain` (lower case) or a domain it is under is a throwaway provider's. */
export function isDisposableDomain(domain: string): boolean {
  disposable ??= new Set(
    createRequire(__filename)("disposable-email-domains/index.json") as string[],
  );
  const labels = domain.split(".");
  for (let i = 0; i < labels.length - 1; i++)
    if (disposable.has(labels.slice(i).join("."))) return true;
  return false;
}

/** A realm's sign-up domain: itself, or with its subdomains. */
export interface SignupDomain {
  domain: string;
  allow_subdomains: boolean;
}

/** Whether an address at `domain` (lower case) is one of `domains`'. */
export function inSignupDomains(domain: string, domains: readonly SignupDomain[]): boolean {
  return domains.some(
    (d) => d.domain === domain || (d.allow_subdomains && domain.endsWith(`.${d.domain}`)),
  );
}
