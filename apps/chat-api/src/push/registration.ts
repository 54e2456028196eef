import type { Database } from "../db/database";
import { createHash } from "node:crypto";
import { ErrorCode, JsonableError, RequestVariableMissingError } from "@repo/envelope";
import type { Logger } from "pino";
import type { PushTokenKind } from "../gen/prisma/client";
import { checkCap } from "../actions/caps";
import { sendEvent } from "../realtime/queue";
import type { Tx } from "../db/kysely";
import type { PushRegistration } from "../gen/prisma/client";
import type { AuthedUser } from "../caches/auth";
import { type Bouncer, BouncerError, bouncerUnavailable } from "./bouncer";
import {
  deleteLegacyToken,
  deleteOwnDevice,
  deviceCount,
  devicesOf,
  insertDevice,
  legacyTokenCount,
  ownDevice,
  legacyTokensOf,
  takeLegacyTokensById,
  upsertLegacyToken,
  upsertPushRegistration,
} from "../db/queries/devices";

/** The contract's answer when no push service is configured (rule 5). */
export function pushNotConfigured(): JsonableError {
  return new JsonableError(
    "Server is not configured to use push notification service.",
    ErrorCode.PUSH_SERVICE_NOT_CONFIGURED,
  );
}

/** Standard Base64 (RFC 4648, with padding, no URL alphabet) decoded, or undefined. */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  return new Uint8Array(Buffer.from(text, "base64"));
}

/** The cryptosystem byte of libsodium's secretbox, and its key length. */
const SECRETBOX = 0x31;
const SECRETBOX_KEY_BYTES = 32;

/** `token_id` of a push token: the first 8 bytes of its SHA-256. */
export function tokenId(token: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHash("sha256").update(token).digest().subarray(0, 8));
}

/** The fields of POST /mobile_push/register, as sent (undefined = absent). */
export interface PushRegisterFields {
  deviceId: number;
  pushKeyId: number | undefined;
  pushKey: string | undefined;
  tokenKind: PushTokenKind | undefined;
  tokenId: string | undefined;
  bouncerPublicKey: string | undefined;
  encryptedPushRegistration: string | undefined;
}

/** The first missing field of a group, in the spec's order, or undefined when all are there. */
function firstMissing(group: Record<string, unknown>): string | undefined {
  return Object.entries(group).find(([, value]) => value === undefined)?.[0];
}

/**
 * POST /mobile_push/register, the spec's five rules: no push service is
 * `PUSH_SERVICE_NOT_CONFIGURED`; the device must be the caller's; an initial
 * registration needs both field groups, a rotation one complete group; each
 * field is checked; a token group is forwarded to the bouncer first (a
 * failure stores nothing); then the registration and the removal of the
 * user's legacy registrations with the same token are one transaction; last,
 * the bouncer is told to drop those legacy tokens (all of the user's when none
 * is left locally, so one that failed before goes too).
 */
export async function doRegisterPush(
  db: Database,
  bouncer: Bouncer | undefined,
  logger: Logger,
  user: AuthedUser,
  fields: PushRegisterFields,
): Promise<void> {
  if (bouncer === undefined) throw pushNotConfigured();
  const device = await ownDevice(db, user.id, fields.deviceId);
  if (device === null) throw new JsonableError("Invalid device ID");

  const keyGroup = { push_key: fields.pushKey, push_key_id: fields.pushKeyId };
  const tokenGroup = {
    token_kind: fields.tokenKind,
    token_id: fields.tokenId,
    bouncer_public_key: fields.bouncerPublicKey,
    encrypted_push_registration: fields.encryptedPushRegistration,
  };
  const keyMissing = firstMissing(keyGroup);
  const tokenMissing = firstMissing(tokenGroup);
  const keyAny = Object.values(keyGroup).some((v) => v !== undefined);
  const tokenAny = Object.values(tokenGroup).some((v) => v !== undefined);
  const initial =
    device.push_registration?.push_key == null || device.push_registration.token_id == null;
  // A group partly sent, or (initially, or when nothing is sent) a group not sent at all.
  if (keyMissing !== undefined && (keyAny || initial || !tokenAny))
    throw new RequestVariableMissingError(keyMissing);
  if (tokenMissing !== undefined && (tokenAny || initial))
    throw new RequestVariableMissingError(tokenMissing);

  const pushKey = fields.pushKey === undefined ? undefined : decodeBase64(fields.pushKey);
  if (
    fields.pushKey !== undefined &&
    (pushKey === undefined ||
      pushKey.length !== 1 + SECRETBOX_KEY_BYTES ||
      pushKey[0] !== SECRETBOX)
  )
    throw new JsonableError("Invalid push_key");
  const token = fields.tokenId === undefined ? undefined : decodeBase64(fields.tokenId);
  if (fields.tokenId !== undefined && token?.length !== 8)
    throw new JsonableError("Invalid token_id");
  if (fields.bouncerPublicKey !== undefined && decodeBase64(fields.bouncerPublicKey) === undefined)
    throw new JsonableError("Invalid bouncer_public_key");
  if (
    fields.encryptedPushRegistration !== undefined &&
    decodeBase64(fields.encryptedPushRegistration) === undefined
  )
    throw new JsonableError("Invalid encrypted_push_registration");

  if (tokenMissing === undefined) {
    try {
      await bouncer.post("e2ee/register", {
        realm_id: user.realm_id,
        user_id: user.id,
        device_id: device.id,
        token_kind: fields.tokenKind ?? "",
        token_id: fields.tokenId ?? "",
        bouncer_public_key: fields.bouncerPublicKey ?? "",
        encrypted_push_registration: fields.encryptedPushRegistration ?? "",
      });
    } catch (error) {
      if (error instanceof BouncerError) throw bouncerUnavailable(logger, error);
      throw error;
    }
  }

  const keyData =
    keyMissing === undefined
      ? { push_key: pushKey, push_key_id: BigInt(fields.pushKeyId ?? 0) }
      : {};
  const tokenData =
    tokenMissing === undefined
      ? {
          token_kind: fields.tokenKind,
          token_id: token,
          bouncer_public_key: fields.bouncerPublicKey,
          encrypted_push_registration: fields.encryptedPushRegistration,
        }
      : {};
  const registeredToken = token ?? device.push_registration?.token_id ?? undefined;
  const removed = await db.transaction(async (tx) => {
    const registration = await upsertPushRegistration(tx, device.id, {
      ...keyData,
      ...tokenData,
    });
    await sendDeviceUpdate(tx, user.id, device.id, registration, tokenMissing === undefined);
    if (registeredToken === undefined) return { tokens: [], left: 1 };
    const tokens = await takeLegacyTokensById(tx, user.id, registeredToken);
    return { tokens, left: await legacyTokenCount(tx, user.id) };
  });
  if (removed.tokens.length > 0) {
    await forgetLegacyAtBouncer(bouncer, logger, user.id, removed.tokens, removed.left === 0);
  }
}

/**
 * The `device` `update` event of a registration just written: the key's id,
 * and when a token was sent, the token's fields (Zulip sends only what changed).
 */
async function sendDeviceUpdate(
  tx: Tx,
  userId: number,
  deviceId: number,
  registration: PushRegistration,
  tokenSent: boolean,
): Promise<void> {
  const view = deviceView(registration);
  await sendEvent(tx, [userId], {
    type: "device",
    op: "update",
    device_id: deviceId,
    push_key_id: view.push_key_id,
    ...(tokenSent
      ? {
          push_token_id: view.push_token_id,
          pending_push_token_id: null,
          push_token_last_updated_timestamp: view.push_token_last_updated_timestamp,
          push_registration_error_code: null,
        }
      : {}),
  });
}

/**
 * Tells the bouncer that legacy tokens were removed locally: one call per
 * token, or, when the user has none left, one call for all of the user's
 * (which also drops any whose own removal failed earlier). Failures are
 * logged; the local removal stands.
 */
async function forgetLegacyAtBouncer(
  bouncer: Bouncer,
  logger: Logger,
  userId: number,
  tokens: readonly { kind: PushTokenKind; token: string }[],
  noneLeft: boolean,
): Promise<void> {
  const calls = noneLeft
    ? [() => bouncer.post("unregister/all", { user_id: userId })]
    : tokens.map(
        (t) => () =>
          bouncer.post("unregister", { user_id: userId, token: t.token, token_kind: t.kind }),
      );
  for (const call of calls) {
    await call().catch((error: unknown) => {
      logger.warn(
        { detail: error instanceof BouncerError ? error.detail : String(error), user_id: userId },
        "the push bouncer still holds a legacy token removed here",
      );
    });
  }
}

/** POST /register_client_device: a new device record of the caller; returns its id. */
export async function doRegisterDevice(
  db: Database,
  user: AuthedUser,
  cap: number,
): Promise<number> {
  return db.transaction(async (tx) => {
    checkCap(await deviceCount(tx, user.id), 1, cap, "devices");
    const deviceId = await insertDevice(tx, user.id);
    await sendEvent(tx, [user.id], { type: "device", op: "add", device_id: deviceId });
    return deviceId;
  });
}

/** POST /remove_client_device: removes one of the caller's devices with its push registration. */
export async function doRemoveDevice(
  db: Database,
  user: AuthedUser,
  deviceId: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    if (!(await deleteOwnDevice(tx, user.id, deviceId)))
      throw new JsonableError("Invalid device ID");
    await sendEvent(tx, [user.id], { type: "device", op: "remove", device_id: deviceId });
  });
}

/** A device as `POST /register`'s `devices` and `device` events show it (feature level 468). */
export function deviceView(registration: PushRegistration | null) {
  const tokenSet = registration?.token_id != null;
  return {
    push_key_id: registration?.push_key_id == null ? null : Number(registration.push_key_id),
    // The bouncer has accepted the token before it is stored: none is pending.
    push_token_id: tokenSet ? Buffer.from(registration.token_id ?? []).toString("base64") : null,
    pending_push_token_id: null,
    push_token_last_updated_timestamp: tokenSet
      ? Math.floor(registration.last_updated.getTime() / 1000)
      : null,
    push_registration_error_code: null,
  };
}

/** `devices` of `POST /register`: the user's devices by id. */
export async function listDevices(
  db: Database,
  userId: number,
): Promise<Record<string, ReturnType<typeof deviceView>>> {
  const devices = await devicesOf(db, userId);
  return Object.fromEntries(devices.map((d) => [String(d.id), deviceView(d.push_registration)]));
}

/** Legacy (unencrypted) token registration: the kinds of the two old endpoints. */
export interface LegacyToken {
  kind: PushTokenKind;
  token: string;
  iosAppId?: string;
}

/** Zulip's checks of a legacy token: not empty, at most 4096 characters, hex for APNs. */
function checkLegacyToken({ kind, token }: LegacyToken): void {
  if (token === "" || token.length > 4096) throw new JsonableError("Empty or invalid length token");
  if (kind === "apns" && !/^[0-9a-fA-F]+$/.test(token))
    throw new JsonableError("Invalid APNS token");
}

/** POST /users/me/apns_device_token and /android_gcm_reg_id: registered at the bouncer, then stored. */
export async function doAddLegacyToken(
  db: Database,
  bouncer: Bouncer | undefined,
  logger: Logger,
  user: AuthedUser,
  legacy: LegacyToken,
): Promise<void> {
  if (bouncer === undefined) throw pushNotConfigured();
  checkLegacyToken(legacy);
  try {
    await bouncer.post("register", {
      user_id: user.id,
      token: legacy.token,
      token_kind: legacy.kind,
      ...(legacy.iosAppId === undefined ? {} : { ios_app_id: legacy.iosAppId }),
    });
  } catch (error) {
    if (error instanceof BouncerError) throw bouncerUnavailable(logger, error);
    throw error;
  }
  await upsertLegacyToken(db, user.id, {
    kind: legacy.kind,
    token: legacy.token,
    token_id: tokenId(legacy.token),
    ios_app_id: legacy.iosAppId ?? null,
  });
}

/** DELETE of a legacy token: removed here, then at the bouncer (best effort, as rule 4). */
export async function doRemoveLegacyToken(
  db: Database,
  bouncer: Bouncer | undefined,
  logger: Logger,
  user: AuthedUser,
  legacy: LegacyToken,
): Promise<void> {
  if (bouncer === undefined) throw pushNotConfigured();
  const left = await db.transaction(async (tx) => {
    if (!(await deleteLegacyToken(tx, user.id, legacy.kind, legacy.token)))
      throw new JsonableError("Token does not exist");
    return legacyTokenCount(tx, user.id);
  });
  await forgetLegacyAtBouncer(bouncer, logger, user.id, [legacy], left === 0);
}

/**
 * POST /mobile_push/test_notification (feature level 217): asks the bouncer
 * to send a test notification (Zulip's `test` event) to the caller's device
 * of push token `token`, or to all their devices; `Device not recognized`
 * (`INVALID_PUSH_DEVICE_TOKEN`) for a token they did not register.
 */
export async function doSendTestNotification(
  db: Database,
  bouncer: Bouncer | undefined,
  logger: Logger,
  user: AuthedUser,
  realm: { id: number; name: string; url: string },
  token: string | undefined,
): Promise<void> {
  if (bouncer === undefined) throw pushNotConfigured();
  const devices = await legacyTokensOf(db, user.id, token);
  if (token !== undefined && devices.length === 0)
    throw new JsonableError("Device not recognized", ErrorCode.INVALID_PUSH_DEVICE_TOKEN);
  if (devices.length === 0) return;
  const payload = {
    event: "test",
    server: new URL(realm.url).host,
    realm_id: realm.id,
    realm_name: realm.name,
    realm_url: realm.url,
    user_id: user.id,
    time: Math.floor(Date.now() / 1000),
  };
  try {
    await bouncer.post("notify", {
      user_id: user.id,
      android_devices: JSON.stringify(devices.filter((d) => d.kind === "fcm").map((d) => d.token)),
      apple_devices: JSON.stringify(devices.filter((d) => d.kind === "apns").map((d) => d.token)),
      gcm_payload: JSON.stringify(payload),
      apns_payload: JSON.stringify({
        alert: {
          title: "Test notification",
          body: `This is a test notification from ${realm.name} (${realm.url}).`,
        },
        custom: { zulip: payload },
      }),
    });
  } catch (error) {
    if (error instanceof BouncerError) throw bouncerUnavailable(logger, error);
    throw error;
  }
}
