import { Bouncer } from "../push/bouncer";
import {
  doAddLegacyToken,
  doRegisterDevice,
  doRegisterPush,
  doRemoveDevice,
  doRemoveLegacyToken,
} from "../push/registration";
import { int, oneOf, str } from "../lib/params";
import type { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** Largest unsigned 32-bit integer (`push_key_id`). */
const UINT32_MAX = 4_294_967_295;

/** Client devices and push registration (the end-to-end encrypted kind and the legacy tokens). */
export function pushRoutes(api: Api, { db, config, logger }: Services): void {
  const bouncer = Bouncer.fromConfig(config);
  const humans = { bots: false };

  api.user(
    "POST",
    "/register_client_device",
    {
      operationId: "register-client-device",
      summary: "Register a client device",
      tag: "mobile",
      access: humans,
      params: {},
    },
    async ({ user }) => ({
      device_id: await doRegisterDevice(db.prisma, user, config.CHAT_MAX_OBJECTS_PER_USER),
    }),
  );

  api.user(
    "POST",
    "/remove_client_device",
    {
      operationId: "remove-client-device",
      summary: "Remove a client device",
      tag: "mobile",
      access: humans,
      params: { device_id: int({ min: 0 }) },
    },
    async ({ user, params }) => {
      await doRemoveDevice(db.prisma, user, params.device_id);
      return {};
    },
  );

  api.user(
    "POST",
    "/mobile_push/register",
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
      await doRegisterPush(db.prisma, bouncer, logger, user, {
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
  );

  for (const [path, kind, operation] of [
    ["/users/me/apns_device_token", "apns", "apns-token"],
    ["/users/me/android_gcm_reg_id", "fcm", "fcm-token"],
  ] as const) {
    api.user(
      "POST",
      path,
      {
        operationId: `add-${operation}`,
        summary: `Add a legacy ${kind === "apns" ? "APNs" : "FCM"} push token`,
        tag: "mobile",
        access: humans,
        params: {
          token: str(),
          ...(kind === "apns" ? { appid: str().optional() } : {}),
        },
      },
      async ({ user, params }) => {
        const appid = "appid" in params ? params.appid : undefined;
        await doAddLegacyToken(db.prisma, bouncer, logger, user, {
          kind,
          token: params.token,
          ...(typeof appid === "string" ? { iosAppId: appid } : {}),
        });
        return {};
      },
    );
    api.user(
      "DELETE",
      path,
      {
        operationId: `remove-${operation}`,
        summary: `Remove a legacy ${kind === "apns" ? "APNs" : "FCM"} push token`,
        tag: "mobile",
        access: humans,
        params: { token: str() },
      },
      async ({ user, params }) => {
        await doRemoveLegacyToken(db.prisma, bouncer, logger, user, { kind, token: params.token });
        return {};
      },
    );
  }
}
