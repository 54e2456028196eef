import { Bouncer } from "../push/bouncer";
import { realmUrl } from "../lib/realm-url";
import {
  doAddLegacyToken,
  doRegisterDevice,
  doRegisterPush,
  doRemoveDevice,
  doRemoveLegacyToken,
  doSendTestNotification,
} from "../push/registration";
import { int, oneOf, str } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** Largest unsigned 32-bit integer (`push_key_id`). */
const UINT32_MAX = 4_294_967_295;

/** Client devices and push registration (the end-to-end encrypted kind and the legacy tokens). */
export function pushRoutes({ db, config, logger }: Services) {
  const bouncer = Bouncer.fromConfig(config);
  const humans = { bots: false };

  /** Removing a legacy token of one kind (`DELETE /users/me/apns_device_token`, `.../android_gcm_reg_id`). */
  const removeLegacyToken = (kind: "apns" | "fcm", name: string, label: string) =>
    userEndpoint(
      {
        operationId: `remove-${name}`,
        summary: `Remove a legacy ${label} push token`,
        tag: "mobile",
        access: humans,
        params: { token: str() },
      },
      async ({ user, params }) => {
        await doRemoveLegacyToken(db, bouncer, logger, user, { kind, token: params.token });
        return {};
      },
    );

  return {
    registerClientDevice: userEndpoint(
      {
        operationId: "register-client-device",
        summary: "Register a client device",
        tag: "mobile",
        access: humans,
        params: {},
      },
      async ({ user }) => ({
        device_id: await doRegisterDevice(db, user, config.CHAT_MAX_OBJECTS_PER_USER),
      }),
    ),
    removeClientDevice: userEndpoint(
      {
        operationId: "remove-client-device",
        summary: "Remove a client device",
        tag: "mobile",
        access: humans,
        params: { device_id: int({ min: 0 }) },
      },
      async ({ user, params }) => {
        await doRemoveDevice(db, user, params.device_id);
        return {};
      },
    ),
    registerPushDevice: userEndpoint(
      {
        operationId: "register-push-device",
        summary: "Register a device for end-to-end encrypted push notifications",
        tag: "mobile",
        access: humans,
        params: {
          device_id: int({ min: 0 }),
          push_key_id: int({ min: 0, max: UINT32_MAX }).optional(),
          push_key: str().optional(),
          token_kind: oneOf(["fcm", "apns"]).optional(),
          token_id: str().optional(),
          bouncer_public_key: str().optional(),
          encrypted_push_registration: str().optional(),
        },
      },
      async ({ user, params }) => {
        await doRegisterPush(db, bouncer, logger, user, {
          deviceId: params.device_id,
          pushKeyId: params.push_key_id,
          pushKey: params.push_key,
          tokenKind: params.token_kind,
          tokenId: params.token_id,
          bouncerPublicKey: params.bouncer_public_key,
          encryptedPushRegistration: params.encrypted_push_registration,
        });
        return {};
      },
    ),
    addApnsToken: userEndpoint(
      {
        operationId: "add-apns-token",
        summary: "Add a legacy APNs push token",
        tag: "mobile",
        access: humans,
        params: { token: str(), appid: str().optional() },
      },
      async ({ user, params }) => {
        await doAddLegacyToken(db, bouncer, logger, user, {
          kind: "apns",
          token: params.token,
          ...(params.appid === undefined ? {} : { iosAppId: params.appid }),
        });
        return {};
      },
    ),
    removeApnsToken: removeLegacyToken("apns", "apns-token", "APNs"),
    addFcmToken: userEndpoint(
      {
        operationId: "add-fcm-token",
        summary: "Add a legacy FCM push token",
        tag: "mobile",
        access: humans,
        params: { token: str() },
      },
      async ({ user, params }) => {
        await doAddLegacyToken(db, bouncer, logger, user, {
          kind: "fcm",
          token: params.token,
        });
        return {};
      },
    ),
    removeFcmToken: removeLegacyToken("fcm", "fcm-token", "FCM"),
    sendTestNotification: userEndpoint(
      {
        operationId: "test-notify",
        summary: "Send a test notification to mobile device(s)",
        tag: "mobile",
        access: humans,
        params: { token: str({ maxLength: 4096 }).optional() },
      },
      async ({ user, realm, params }) => {
        await doSendTestNotification(
          db,
          bouncer,
          logger,
          user,
          { id: realm.id, name: realm.name, url: realmUrl(config, realm) },
          params.token,
        );
        return {};
      },
    ),
  };
}
