/**
 * The raw SQL statements of the most frequent operations (run with
 * `db.sql`, without Prisma's per-query cost), in one place so the benchmark's
 * raw-`pg` reference sends exactly these too (apps/chat-api/bench).
 */

/** Writes an event to the queues that want it (events/queue.ts, sendEvent): $1 user ids, $2 event type, $3 the event, $4 the NOTIFY channel. */
export const SEND_EVENT = `
    WITH queues AS (
      UPDATE event_queues SET last_event_id = last_event_id + 1
      WHERE user_id = ANY($1::int[])
        AND (all_event_types OR $2 = ANY(event_types))
      RETURNING id, last_event_id
    ), written AS (
      INSERT INTO events (queue_id, id, payload)
      SELECT id, last_event_id, $3::jsonb FROM queues
      RETURNING queue_id
    )
    SELECT pg_notify($4, queue_id) FROM written`;

/**
 * Group membership, for GET /user_groups/{id}/members/{user_id} and every
 * permission check: $1 group, $2 realm (or NULL for a group already known to be
 * the realm's, such as a permission setting's), $3 user, $4 direct members
 * only. Whether the group and the user are the realm's, and whether the user
 * is an active member (through subgroups at any depth unless $4; UNION stops cycles).
 */
export const GROUP_MEMBERSHIP = `WITH RECURSIVE groups(id) AS (
       SELECT id FROM user_groups WHERE id = $1 AND ($2::int IS NULL OR realm_id = $2::int)
       UNION
       SELECT s.subgroup_id FROM user_group_subgroups s JOIN groups g ON s.supergroup_id = g.id
       WHERE NOT $4::boolean
     )
     SELECT EXISTS (
              SELECT 1 FROM user_groups WHERE id = $1 AND ($2::int IS NULL OR realm_id = $2::int)
            ) AS group_found,
            EXISTS (
              SELECT 1 FROM users WHERE id = $3 AND ($2::int IS NULL OR realm_id = $2::int)
            ) AS user_found,
            EXISTS (
              SELECT 1 FROM user_group_members m
              JOIN groups g ON g.id = m.group_id
              JOIN users u ON u.id = m.user_id
              WHERE m.user_id = $3 AND u.is_active
            ) AS member`;

/** The realm's presences: $1 realm, $2 seen since, $3 changed after this update id (or null); with emails. */
export const REALM_PRESENCES = `SELECT p.user_id, p.realm_id, p.last_connected_time, p.last_active_time, p.last_update_id,
            u.email
     FROM presences p JOIN users u ON u.id = p.user_id
     WHERE p.realm_id = $1 AND p.last_connected_time >= $2 AND u.is_active AND NOT u.is_bot
       AND ($3::int IS NULL OR p.last_update_id > $3::int)
     ORDER BY p.user_id`;

/** PATCH /drafts/{id}'s checks in one statement: $1 user, $2 draft; the sync setting and whether the draft is theirs. */
export const DRAFT_CHECK = `SELECT u.enable_drafts_synchronization AS sync, d.id AS draft
     FROM users u LEFT JOIN drafts d ON d.id = $2 AND d.user_id = u.id
     WHERE u.id = $1`;

/** PATCH /drafts/{id}'s change: $1 type, $2 to, $3 topic, $4 content, $5 edit time, $6 draft, $7 user. */
export const DRAFT_UPDATE = `UPDATE drafts SET type = $1::"DraftType", "to" = $2::int[], topic = $3, content = $4,
         last_edit_time = $5
       WHERE id = $6 AND user_id = $7
       RETURNING id, type::text AS type, "to", topic, content, last_edit_time`;

/** A channel's visibility columns and $2's subscription to it: $1 channel, $2 user. */
export const CHANNEL_VISIBILITY = `SELECT c.realm_id, c.is_web_public, c.invite_only, s.active AS subscribed
     FROM channels c LEFT JOIN subscriptions s ON s.channel_id = c.id AND s.user_id = $2
     WHERE c.id = $1`;

/**
 * One batch of POST /mark_all_as_read: $1 the read flag, $2 user, $3 batch size;
 * marks the newest unread messages left, locked, and returns their ids.
 */
export const MARK_READ_BATCH_SQL = `UPDATE user_messages SET flags = flags | $1
     WHERE user_id = $2 AND message_id IN (
       SELECT message_id FROM user_messages
       WHERE user_id = $2 AND (flags & 1) = 0
       ORDER BY message_id DESC LIMIT $3
       FOR UPDATE)
     RETURNING message_id`;
