-- The e-mails queued to an address lately: the missed-message e-mails' hourly cap per person.
CREATE INDEX "outbox_emails_to_address_date_created_idx" ON "outbox_emails" ("to_address", "date_created");
