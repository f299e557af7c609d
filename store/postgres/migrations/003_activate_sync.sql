-- 003: an operator's activation (refdata activate) is marked in the pointer, so
-- newer stored versions are kept aside on purpose; sync keeps its state here.
ALTER TABLE refdata_active ADD COLUMN activated boolean NOT NULL DEFAULT false;

CREATE TABLE refdata_sync_state (
    one   boolean PRIMARY KEY DEFAULT true CHECK (one),
    state bytea NOT NULL
);
