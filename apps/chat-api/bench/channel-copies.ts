/**
 * Channels made in one statement for a large realm, in the benchmarks and the
 * tests alike: `count` copies of the realm's Denmark (its permission groups),
 * named `<prefix>-1` … `<prefix>-<count>`. `run` is any SQL runner (a pg
 * client, Prisma's raw query) answering the inserted ids.
 */
export async function insertChannelCopies(
  run: (sql: string, params: readonly unknown[]) => Promise<readonly { id: number }[]>,
  realmId: number,
  prefix: string,
  count: number,
): Promise<number[]> {
  const rows = await run(
    `INSERT INTO channels (realm_id, name, description, rendered_description,
       can_add_subscribers_group_id, can_administer_channel_group_id, can_delete_any_message_group_id,
       can_delete_own_message_group_id, can_move_messages_out_of_channel_group_id,
       can_move_messages_within_channel_group_id, can_remove_subscribers_group_id,
       can_resolve_topics_group_id, can_send_message_group_id, can_subscribe_group_id,
       can_create_topic_group_id)
     SELECT realm_id, $3 || '-' || n, 'Channel ' || n, '<p>Channel ' || n || '</p>',
       can_add_subscribers_group_id, can_administer_channel_group_id, can_delete_any_message_group_id,
       can_delete_own_message_group_id, can_move_messages_out_of_channel_group_id,
       can_move_messages_within_channel_group_id, can_remove_subscribers_group_id,
       can_resolve_topics_group_id, can_send_message_group_id, can_subscribe_group_id,
       can_create_topic_group_id
     FROM channels, generate_series(1, $2::int) AS n
     WHERE realm_id = $1 AND name = 'Denmark' ORDER BY n RETURNING id`,
    [realmId, count, prefix],
  );
  if (rows.length !== count) throw new Error("could not create the channels");
  return rows.map((row) => row.id);
}
