-- A message's edits, oldest first (GET /messages/{id}/history): each
-- {user_id, timestamp} with the content and topic it replaced (prev_content,
-- prev_rendered_content, prev_topic) where it changed them; NULL: never edited.
ALTER TABLE "messages" ADD COLUMN "edit_history" JSONB;
