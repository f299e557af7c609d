-- 008: the pointer keeps its Previous's own previous version while a switch
-- is scheduled, so a replica that starts before the instant serves the
-- version the others serve with its latest diff (previous_before → previous).
ALTER TABLE refdata_active ADD COLUMN previous_before text NOT NULL DEFAULT '';
