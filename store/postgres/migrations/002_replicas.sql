-- 002: replicas stage a new version before any serves it. The pointer names the
-- new version at once, with the instant every replica switches to it: first a
-- deadline (publish + stage bound), moved earlier by the publisher once every
-- live replica reports it staged.
ALTER TABLE refdata_active ADD COLUMN activate_at timestamptz;

CREATE TABLE refdata_replicas (
    id      text PRIMARY KEY,
    serving text NOT NULL DEFAULT '',
    staged  text NOT NULL DEFAULT '',
    seen_at timestamptz NOT NULL
);
