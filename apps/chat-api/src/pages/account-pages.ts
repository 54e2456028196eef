/**
 * The pages Zulip's apps and e-mails open in a browser, rendered by the
 * server: accept an invitation (`/join/<key>/`), sign up by e-mail
 * (`/register/`, then the e-mail's `/accounts/do_confirm/<key>/`), and reset a
 * password (`/accounts/password/reset/`, then the e-mail's
 * `/accounts/password/reset/<key>/`). Each post is checked for CSRF and counted
 * against its address's rate limit; what it does is an action of
 * `actions/signup.ts`.
 */
import { JsonableError } from "@repo/envelope";
import { type ErrorRequestHandler, type Request, type Response, Router } from "express";
import { z } from "zod";
import type { Services } from "../http/context";
import { exchangeOf } from "../http/exchange";
import { type Field, form, markup, paragraph } from "../lib/html-page";
import { FORM_PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../lib/password-strength";
import { realmUrl } from "../lib/realm-url";
import { LINK_EXPIRED } from "../actions/confirmation-links";
import { isLivePasswordLink, requestPasswordReset, resetPassword } from "../actions/password-reset";
import {
  acceptInvitation,
  joinLink,
  registerConfirmed,
  requestSignup,
  signupLinkAddress,
} from "../actions/signup";
import type { Realm } from "../gen/prisma/client";
import { unsubscribeFromMissedMessages, unsubscribeTokenUser } from "../actions/missed-messages";
import {
  checkCsrf,
  csrfToken,
  field,
  loggedInHint,
  pageRealm,
  readForm,
  refusal,
  sendPage,
  withinRateLimit,
} from "./page-requests";

const NAME_FIELD: Field = {
  name: "full_name",
  label: "Full name",
  type: "text",
  autocomplete: "name",
  maxLength: 100,
};
const PASSWORD_FIELD: Field = {
  name: "password",
  label: "Password",
  type: "password",
  autocomplete: "new-password",
  minLength: PASSWORD_MIN_LENGTH,
  maxLength: FORM_PASSWORD_MAX_LENGTH,
  hint: `At least ${String(PASSWORD_MIN_LENGTH)} characters, and not easy to guess.`,
};
const { hint: _hint, ...PASSWORD_WITHOUT_HINT } = PASSWORD_FIELD;
const PASSWORD_AGAIN: Field = {
  ...PASSWORD_WITHOUT_HINT,
  name: "password_again",
  label: "The password again",
};
const EMAIL_FIELD: Field = {
  name: "email",
  label: "E-mail address",
  type: "email",
  autocomplete: "email",
  maxLength: 254,
};

const address = z.email().max(254);

/** Where each page is, for the metrics' route label. */
const ROUTES = {
  join: "/join/{key}/",
  register: "/register/",
  confirm: "/accounts/do_confirm/{key}/",
  reset: "/accounts/password/reset/",
  resetKey: "/accounts/password/reset/{key}/",
  unsubscribe: "/accounts/unsubscribe/missed_messages/{token}/",
} as const;

/** The words of a page asking for an address; `closed` instead of the form when it is. */
interface AddressText {
  title: string;
  intro: string;
  submit: string;
  closed: string | undefined;
}

/** A handler of a page: its realm found (or answered 404), its route named. */
type PageHandler = (req: Request, res: Response, realm: Realm) => void | Promise<void>;

/** The pages' router. */
export function accountPages(services: Services): Router {
  const router = Router();
  const on = (route: string, handler: PageHandler) => async (req: Request, res: Response) => {
    exchangeOf(res).route = route;
    const realm = await pageRealm(services, req, res);
    if (realm !== undefined) await handler(req, res, realm);
  };
  const posted = (route: string, handler: PageHandler) => async (req: Request, res: Response) => {
    exchangeOf(res).route = route;
    if (!checkCsrf(req, res) || !(await withinRateLimit(services, req, res))) return;
    const realm = await pageRealm(services, req, res);
    if (realm !== undefined) await handler(req, res, realm);
  };
  const url = (realm: Realm) => realmUrl(services.config, realm);
  const key = (req: Request) => String(req.params.key);

  const expired = (res: Response) => {
    sendPage(res, 404, "Link expired", paragraph(LINK_EXPIRED));
  };
  const checkEmail = (res: Response, email: string) => {
    sendPage(
      res,
      200,
      "Check your e-mail",
      markup`<p>We sent a message to <strong>${email}</strong>. Follow the link in it to go on.</p>
        <p>Nothing there after a few minutes? Look in your spam folder.</p>`,
    );
  };

  // An e-mail invitation: the invited address chooses its name and password.
  // A reusable link: an address first, confirmed by e-mail.
  const joinForm = async (req: Request, res: Response, realm: Realm, error?: string) => {
    const link = await joinLink(services.db, realm, key(req));
    if (link.kind === "invalid") {
      expired(res);
      return;
    }
    const token = csrfToken(services, req, res);
    sendPage(
      res,
      error === undefined ? 200 : 400,
      `Join ${realm.name}`,
      link.kind === "invitation"
        ? form({
            csrfToken: token,
            intro: markup`<p>You are joining as <strong>${link.email}</strong>.</p>`,
            fields: [{ ...NAME_FIELD, value: field(req, "full_name") }, PASSWORD_FIELD],
            submit: "Sign up",
            error,
          })
        : form({
            csrfToken: token,
            intro: paragraph("Enter your e-mail address; we will send you a link to sign up."),
            fields: [{ ...EMAIL_FIELD, value: field(req, "email") }],
            submit: "Continue",
            error,
          }),
    );
  };
  router.get(
    "/join/:key/",
    on(ROUTES.join, (req, res, realm) => joinForm(req, res, realm)),
  );
  router.post(
    "/join/:key/",
    readForm,
    posted(ROUTES.join, async (req, res, realm) => {
      const link = await joinLink(services.db, realm, key(req));
      try {
        if (link.kind === "invitation") {
          const made = await acceptInvitation(services.db, realm, key(req), {
            fullName: field(req, "full_name"),
            password: field(req, "password"),
          });
          sendPage(res, 200, "Your account is ready", loggedInHint(url(realm), made.email));
        } else if (link.kind === "reusable") {
          const email = checkedAddress(field(req, "email"));
          await requestSignup(services.db, realm, email, link.id, url(realm));
          checkEmail(res, email);
        } else expired(res);
      } catch (error) {
        await joinForm(req, res, realm, refusal(error));
      }
    }),
  );

  // A page asking for an address, to which the server then sends a link.
  const addressForm = (req: Request, res: Response, text: AddressText, error?: string) => {
    sendPage(
      res,
      error === undefined ? 200 : 400,
      text.title,
      form({
        csrfToken: csrfToken(services, req, res),
        intro: paragraph(text.intro),
        fields: [{ ...EMAIL_FIELD, value: field(req, "email") }],
        submit: text.submit,
        error,
      }),
    );
  };
  const addressPages = (
    path: string,
    route: string,
    text: (realm: Realm) => AddressText,
    send: (realm: Realm, email: string) => Promise<void>,
  ) => {
    router.get(
      path,
      on(route, (req, res, realm) => {
        const { closed } = text(realm);
        if (closed === undefined) addressForm(req, res, text(realm));
        else sendPage(res, 200, text(realm).title, paragraph(closed));
      }),
    );
    router.post(
      path,
      readForm,
      posted(route, async (req, res, realm) => {
        try {
          const email = checkedAddress(field(req, "email"));
          await send(realm, email);
          checkEmail(res, email);
        } catch (error) {
          addressForm(req, res, text(realm), refusal(error));
        }
      }),
    );
  };

  // Open sign-up: an address, confirmed by e-mail.
  addressPages(
    "/register/",
    ROUTES.register,
    (realm) => ({
      title: `Sign up to ${realm.name}`,
      intro: "Enter your e-mail address; we will send you a link to sign up.",
      submit: "Continue",
      closed: realm.invite_required
        ? "This organization needs an invitation to join. Ask one of its administrators to invite you."
        : undefined,
    }),
    (realm, email) => requestSignup(services.db, realm, email, undefined, url(realm)),
  );

  // The confirmed address chooses its name and password.
  const confirmForm = async (req: Request, res: Response, realm: Realm, error?: string) => {
    const email = await signupLinkAddress(services.db, realm, key(req));
    if (email === null) {
      expired(res);
      return;
    }
    sendPage(
      res,
      error === undefined ? 200 : 400,
      `Join ${realm.name}`,
      form({
        csrfToken: csrfToken(services, req, res),
        intro: markup`<p>You are joining as <strong>${email}</strong>.</p>`,
        fields: [{ ...NAME_FIELD, value: field(req, "full_name") }, PASSWORD_FIELD],
        submit: "Sign up",
        error,
      }),
    );
  };
  router.get(
    "/accounts/do_confirm/:key/",
    on(ROUTES.confirm, (req, res, realm) => confirmForm(req, res, realm)),
  );
  router.post(
    "/accounts/do_confirm/:key/",
    readForm,
    posted(ROUTES.confirm, async (req, res, realm) => {
      try {
        const made = await registerConfirmed(services.db, realm, key(req), {
          fullName: field(req, "full_name"),
          password: field(req, "password"),
        });
        sendPage(res, 200, "Your account is ready", loggedInHint(url(realm), made.email));
      } catch (error) {
        await confirmForm(req, res, realm, refusal(error));
      }
    }),
  );

  // A password reset: an address, then the e-mailed link's form.
  addressPages(
    "/accounts/password/reset/",
    ROUTES.reset,
    (realm) => ({
      title: "Reset your password",
      intro: `Enter the e-mail address of your account in ${realm.name}; we will send you a link to choose a new password.`,
      submit: "Send the link",
      closed: undefined,
    }),
    (realm, email) => requestPasswordReset(services.db, realm, email, url(realm)),
  );
  const newPasswordForm = async (req: Request, res: Response, realm: Realm, error?: string) => {
    if (!(await isLivePasswordLink(services.db, realm, key(req)))) {
      expired(res);
      return;
    }
    sendPage(
      res,
      error === undefined ? 200 : 400,
      "Choose a new password",
      form({
        csrfToken: csrfToken(services, req, res),
        fields: [PASSWORD_FIELD, { ...PASSWORD_AGAIN }],
        submit: "Set the password",
        error,
      }),
    );
  };
  router.get(
    "/accounts/password/reset/:key/",
    on(ROUTES.resetKey, (req, res, realm) => newPasswordForm(req, res, realm)),
  );
  router.post(
    "/accounts/password/reset/:key/",
    readForm,
    posted(ROUTES.resetKey, async (req, res, realm) => {
      const password = field(req, "password");
      if (password !== field(req, "password_again")) {
        await newPasswordForm(req, res, realm, "The two passwords are not the same.");
        return;
      }
      try {
        const done = await resetPassword(services.db, realm, key(req), password);
        sendPage(res, 200, "Your password is set", loggedInHint(url(realm), done.email));
      } catch (error) {
        await newPasswordForm(req, res, realm, refusal(error));
      }
    }),
  );
  // The missed-message e-mails' link to stop them: a button, so that a mail
  // scanner following links does not unsubscribe anyone.
  const unsubscribePage = async (req: Request, res: Response, realm: Realm, post: boolean) => {
    const userId = await unsubscribeTokenUser(services.db, realm.id, String(req.params.token));
    if (userId === undefined) {
      sendPage(res, 404, "Link not valid", paragraph("This unsubscribe link is not valid."));
      return;
    }
    if (post) {
      await unsubscribeFromMissedMessages(services, userId);
      sendPage(
        res,
        200,
        "Unsubscribed",
        paragraph(
          "You will no longer get e-mails about messages you missed. You can turn them on again in your notification settings.",
        ),
      );
      return;
    }
    sendPage(
      res,
      200,
      "Stop e-mails about missed messages",
      form({
        csrfToken: csrfToken(services, req, res),
        intro: paragraph(
          "You get an e-mail when a direct message or a mention waits unread while you are away.",
        ),
        fields: [],
        submit: "Stop these e-mails",
      }),
    );
  };
  router.get(
    "/accounts/unsubscribe/missed_messages/:token/",
    on(ROUTES.unsubscribe, (req, res, realm) => unsubscribePage(req, res, realm, false)),
  );
  router.post(
    "/accounts/unsubscribe/missed_messages/:token/",
    readForm,
    posted(ROUTES.unsubscribe, (req, res, realm) => unsubscribePage(req, res, realm, true)),
  );

  // A body the form reader refuses (too large, too many fields): a page, not JSON.
  const unreadable: ErrorRequestHandler = (error: unknown, _req, res, next) => {
    const status =
      typeof error === "object" && error !== null && "status" in error ? Number(error.status) : 0;
    if (status < 400 || status >= 500 || res.headersSent) {
      next(error);
      return;
    }
    sendPage(res, status, "Bad request", paragraph("This form could not be read."));
  };
  router.use(unreadable);
  return router;
}

/** A posted address, trimmed and checked. */
function checkedAddress(raw: string): string {
  const email = raw.trim();
  if (!address.safeParse(email).success) throw new JsonableError("Enter a valid e-mail address.");
  return email;
}
