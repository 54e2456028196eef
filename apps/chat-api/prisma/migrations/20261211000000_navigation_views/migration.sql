-- A person's navigation views (Zulip's NavigationView, feature level 390):
-- built-in views pinned or hidden, and named views of their own.
CREATE TABLE "navigation_views" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "fragment" VARCHAR(1000) NOT NULL,
    "is_pinned" BOOLEAN NOT NULL DEFAULT false,
    "name" VARCHAR(100),

    CONSTRAINT "navigation_views_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "navigation_views_user_id_fragment_key" ON "navigation_views"("user_id", "fragment");

ALTER TABLE "navigation_views" ADD CONSTRAINT "navigation_views_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
